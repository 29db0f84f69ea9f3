//! Embeddings in the service: which model file serves, the background
//! download at boot, readiness → space reconcile → backfill, and the status
//! the dashboard polls (spec: "In-Process Embedder", "Model Download
//! Manager", "Dashboard Enable Flow").
//!
//! The model path resolves as `KIROCREW_EMBED_MODEL_PATH` (wins; the apply
//! endpoint refuses to change it) > `memory.embed_model_path` > the
//! download target `$KIROCREW_HOME/models/<file>` of the configured source.
//! The daemon never blocks start-up on any of this: memory runs keyword-only
//! until the model is resident, then picks vectors up without a restart.

mod apply;
pub mod kernels;
mod runtime;

pub use apply::{validate_model_file, ApplyError, ModelCheck};
pub use runtime::{
    choose_model, configured_model, EmbeddingRuntime, EmbeddingStatus, ModelChoice,
    CALIBRATION_FILE, MODEL_PATH_ENV,
};
