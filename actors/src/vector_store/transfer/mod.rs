//! Export and import of memory as one JSON document (spec: "Semantic
//! Memory → export/import"): `format.rs` the document and the import
//! report (pure), `export.rs` the read, `handle.rs` the import that runs
//! every entry through the ordinary writer.

mod export;
mod format;
mod handle;

pub use format::{
    ImportDocument, ImportEntry, ImportItem, ImportReport, MemoryExport, EXPORT_FORMAT,
    EXPORT_VERSION,
};
