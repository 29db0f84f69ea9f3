//! memory_index.db: the FTS5 full-text index over the Markdown memory files
//! (spec: "Memory": `tokenize='porter unicode61'`, self-healing, incremental
//! updates, full rebuilds).
//!
//! The index is derived data: every row can be recomputed from the files.
//! So any sign of damage (the file is not a database, a page is malformed,
//! the schema is from another version) is handled the same way: close it,
//! delete it (with its WAL and shared-memory files), create it anew and
//! re-index the files. Callers never see a corrupt index as an error.
//!
//! Schema: `docs` holds one row per section (file, section, content, and
//! the `lemmas` column of [`super::lemma`]); `docs_fts` is an external-content
//! FTS5 table over `section`, `content` and `lemmas` (weighted 1 : 1 : 0.5
//! in BM25), kept in step by triggers. The
//! plain table lets an incremental update find a file's rows by index
//! instead of scanning the FTS table.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use super::docs::Doc;
use super::lemma::lemma_column;

/// Bumped when the schema changes; an index with another version is rebuilt.
const SCHEMA_VERSION: i64 = 2;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS docs (
    id INTEGER PRIMARY KEY,
    file TEXT NOT NULL,
    section TEXT NOT NULL,
    content TEXT NOT NULL,
    lemmas TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS docs_file ON docs(file);
CREATE VIRTUAL TABLE IF NOT EXISTS docs_fts USING fts5(
    section, content, lemmas, content='docs', content_rowid='id', tokenize='porter unicode61'
);
CREATE TRIGGER IF NOT EXISTS docs_ai AFTER INSERT ON docs BEGIN
    INSERT INTO docs_fts(rowid, section, content, lemmas)
    VALUES (new.id, new.section, new.content, new.lemmas);
END;
CREATE TRIGGER IF NOT EXISTS docs_ad AFTER DELETE ON docs BEGIN
    INSERT INTO docs_fts(docs_fts, rowid, section, content, lemmas)
    VALUES ('delete', old.id, old.section, old.content, old.lemmas);
END;
";

/// How long a statement waits for another process (a CLI search) to finish.
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// A search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileHit {
    /// Path relative to the memory directory (`history/2026-03-14.md`).
    pub file: String,
    /// The section: its `## ` heading, or the entry's date and time.
    pub section: String,
    /// A short excerpt with the matched words in `[` `]`.
    pub snippet: String,
    /// BM25 relevance, higher is better.
    pub score: f64,
}

/// The index, owned by the `MemoryFiles` actor (or a one-shot CLI search).
#[derive(Debug)]
pub struct FtsIndex {
    path: PathBuf,
    pool: Option<SqlitePool>,
}

/// Whether an error means the index should be recreated: any SQLite
/// error except "busy" and "locked" (another process holds the file; that
/// passes), and I/O or decoding failures. The index is derived data, so
/// recreating it is always safe; keeping a broken one never is.
pub fn is_damage(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(_) => !matches!(primary_code(e), Some(5 | 6)),
        sqlx::Error::Io(_) | sqlx::Error::Protocol(_) | sqlx::Error::ColumnDecode { .. } => true,
        _ => false,
    }
}

/// SQLite's generic error code: a query's own mistake and a missing table
/// both answer it.
const SQLITE_ERROR: i64 = 1;

fn primary_code(e: &sqlx::Error) -> Option<i64> {
    match e {
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|c| c.parse::<i64>().ok())
            .map(|c| c & 0xff),
        _ => None,
    }
}

async fn connect(path: &Path) -> Result<SqlitePool, sqlx::Error> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT);
    let pool = SqlitePoolOptions::new()
        .max_connections(1)
        .min_connections(0)
        .connect_with(options)
        .await?;
    let checked = async {
        let version: i64 = sqlx::query_scalar("PRAGMA user_version")
            .fetch_one(&pool)
            .await?;
        let tables: i64 =
            sqlx::query_scalar("SELECT count(*) FROM sqlite_master WHERE name = 'docs'")
                .fetch_one(&pool)
                .await?;
        if tables > 0 && version != SCHEMA_VERSION {
            return Err(sqlx::Error::Protocol(format!(
                "index schema version {version}, expected {SCHEMA_VERSION}"
            )));
        }
        sqlx::raw_sql(SCHEMA).execute(&pool).await?;
        // The weights live in the table's config, so `ORDER BY rank` lets
        // FTS5 produce rows best-first itself and stop at the LIMIT:
        // snippets are built for the returned rows only.
        sqlx::query("INSERT INTO docs_fts(docs_fts, rank) VALUES ('rank', 'bm25(1.0, 1.0, 0.5)')")
            .execute(&pool)
            .await?;
        sqlx::query(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
            .execute(&pool)
            .await?;
        let ok: String = sqlx::query_scalar("PRAGMA quick_check")
            .fetch_one(&pool)
            .await?;
        if ok != "ok" {
            return Err(sqlx::Error::Protocol(format!("quick_check: {ok}")));
        }
        Ok(())
    }
    .await;
    match checked {
        Ok(()) => Ok(pool),
        Err(e) => {
            pool.close().await;
            Err(e)
        }
    }
}

fn remove_files(path: &Path) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut file = path.as_os_str().to_owned();
        file.push(suffix);
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => tracing::warn!(file = ?file, error = %e, "could not remove index file"),
        }
    }
}

fn lemmas_of(doc: &Doc) -> String {
    lemma_column(&format!("{}\n{}", doc.section, doc.content))
}

impl FtsIndex {
    /// An index at `path`, not opened yet.
    pub fn new(path: PathBuf) -> Self {
        Self { path, pool: None }
    }

    /// The index file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Opens the file, replacing it if it is damaged. Returns whether it was
    /// (re)created empty, in which case the caller should rebuild it.
    pub async fn open(&mut self) -> Result<bool, sqlx::Error> {
        if self.pool.is_some() {
            return Ok(false);
        }
        let existed = self.path.exists();
        match connect(&self.path).await {
            Ok(pool) => {
                let empty: i64 = sqlx::query_scalar("SELECT count(*) FROM docs")
                    .fetch_one(&pool)
                    .await?;
                self.pool = Some(pool);
                Ok(!existed || empty == 0)
            }
            Err(e) => {
                tracing::warn!(path = %self.path.display(), error = %e, "memory index unreadable; recreating it");
                remove_files(&self.path);
                self.pool = Some(connect(&self.path).await?);
                Ok(true)
            }
        }
    }

    /// Closes the file, deletes it and opens a fresh, empty one.
    pub async fn recreate(&mut self) -> Result<(), sqlx::Error> {
        if let Some(pool) = self.pool.take() {
            pool.close().await;
        }
        remove_files(&self.path);
        self.pool = Some(connect(&self.path).await?);
        Ok(())
    }

    async fn pool(&mut self) -> Result<SqlitePool, sqlx::Error> {
        self.open().await?;
        self.pool
            .clone()
            .ok_or_else(|| sqlx::Error::Protocol("index not open".into()))
    }

    /// Replaces every row with `docs` in one transaction (readers see the
    /// old index until it commits). A damaged file is recreated first.
    pub async fn rebuild(&mut self, docs: &[Doc]) -> Result<usize, sqlx::Error> {
        match self.try_rebuild(docs).await {
            Err(e) if is_damage(&e) => {
                tracing::warn!(error = %e, "memory index damaged; recreating it");
                self.recreate().await?;
                self.try_rebuild(docs).await
            }
            other => other,
        }
    }

    async fn try_rebuild(&mut self, docs: &[Doc]) -> Result<usize, sqlx::Error> {
        let pool = self.pool().await?;
        let ok: String = sqlx::query_scalar("PRAGMA quick_check")
            .fetch_one(&pool)
            .await?;
        if ok != "ok" {
            return Err(sqlx::Error::Protocol(format!("quick_check: {ok}")));
        }
        let mut tx = pool.begin().await?;
        sqlx::query("DELETE FROM docs").execute(&mut *tx).await?;
        for doc in docs {
            insert(&mut tx, doc).await?;
        }
        tx.commit().await?;
        Ok(docs.len())
    }

    /// Replaces the rows of `files` with `docs` (an incremental update).
    pub async fn replace_files(
        &mut self,
        files: &[String],
        docs: &[Doc],
    ) -> Result<(), sqlx::Error> {
        let pool = self.pool().await?;
        let mut tx = pool.begin().await?;
        for file in files {
            sqlx::query("DELETE FROM docs WHERE file = ?")
                .bind(file)
                .execute(&mut *tx)
                .await?;
        }
        for doc in docs {
            insert(&mut tx, doc).await?;
        }
        tx.commit().await
    }

    /// Searches for a user's query: its words' FTS5 expression, built as
    /// every search of the memory files builds it, best first; a query with
    /// no searchable word finds nothing.
    pub async fn search_query(
        &mut self,
        query: &str,
        limit: u32,
    ) -> Result<Vec<FileHit>, sqlx::Error> {
        match super::lemma::match_expression(query) {
            Some(expr) => self.search(&expr, limit).await,
            None => Ok(Vec::new()),
        }
    }

    /// Sections matching the FTS5 expression `expr` (built by
    /// [`super::lemma::match_expression`]), best first.
    pub async fn search(&mut self, expr: &str, limit: u32) -> Result<Vec<FileHit>, sqlx::Error> {
        let pool = self.pool().await?;
        let rows: Vec<(String, String, String, f64)> = sqlx::query_as(
            "SELECT d.file, d.section, snippet(docs_fts, 1, '[', ']', '…', 16), docs_fts.rank
             FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid
             WHERE docs_fts MATCH ?
             ORDER BY docs_fts.rank
             LIMIT ?",
        )
        .bind(expr)
        .bind(i64::from(limit))
        .fetch_all(&pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(file, section, snippet, rank)| FileHit {
                file,
                section,
                snippet,
                // bm25 ranks are lower-is-better and negative; flip them.
                score: -rank,
            })
            .collect())
    }

    /// Whether a failed search means the index is damaged. A query's own
    /// error (an FTS5 expression it cannot parse) answers SQLITE_ERROR just
    /// as a missing table does, so for that code the file is checked
    /// ([`Self::is_intact`]) and only a failed check counts as damage;
    /// rebuilding the whole index for every query it rejected was how one
    /// odd question cost a full re-index and still failed.
    pub async fn search_error_is_damage(&mut self, e: &sqlx::Error) -> bool {
        if !is_damage(e) {
            return false;
        }
        if primary_code(e) != Some(SQLITE_ERROR) {
            return true;
        }
        !self.is_intact().await
    }

    /// SQLite's `quick_check` of the file and FTS5's `integrity-check` of
    /// the full-text table against its content table both pass.
    pub async fn is_intact(&mut self) -> bool {
        let Ok(pool) = self.pool().await else {
            return false;
        };
        let quick: Result<String, _> = sqlx::query_scalar("PRAGMA quick_check")
            .fetch_one(&pool)
            .await;
        if !matches!(quick.as_deref(), Ok("ok")) {
            return false;
        }
        sqlx::query("INSERT INTO docs_fts(docs_fts, rank) VALUES('integrity-check', 1)")
            .execute(&pool)
            .await
            .is_ok()
    }

    /// Rows in the index.
    pub async fn count(&mut self) -> Result<i64, sqlx::Error> {
        let pool = self.pool().await?;
        sqlx::query_scalar("SELECT count(*) FROM docs")
            .fetch_one(&pool)
            .await
    }

    /// Checkpoints and closes the file.
    pub async fn close(&mut self) {
        if let Some(pool) = self.pool.take() {
            let _ = sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
                .execute(&pool)
                .await;
            pool.close().await;
        }
    }
}

async fn insert(conn: &mut sqlx::SqliteConnection, doc: &Doc) -> Result<(), sqlx::Error> {
    sqlx::query("INSERT INTO docs (file, section, content, lemmas) VALUES (?, ?, ?, ?)")
        .bind(&doc.file)
        .bind(&doc.section)
        .bind(&doc.content)
        .bind(lemmas_of(doc))
        .execute(conn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use proptest::collection::vec;
    use proptest::prelude::*;

    use super::*;
    use crate::memory_files::lemma::match_expression;

    /// A runtime for the index's async calls (these tests are plain).
    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    }

    fn doc(file: &str, section: &str, content: &str) -> Doc {
        Doc {
            file: file.into(),
            section: section.into(),
            content: content.into(),
        }
    }

    /// Words as people and tools type them: plain and irregular English,
    /// FTS5's own syntax, quotes, accents, CJK, emoji, combining marks,
    /// control and private-use characters, and arbitrary Unicode.
    fn word() -> impl Strategy<Value = String> {
        prop_oneof![
            prop::sample::select(vec![
                "which", "editor", "does", "the", "user", "prefer", "deploy", "work", "ran",
                "went", "children", "AND", "OR", "NOT", "NEAR", "NEAR(a", "b)", "\"", "\"\"", "*",
                "^", "-", "+", ":", "col:", "(", ")", "{x}", "'", "é", "naïve", "東京", "🚀",
                "e\u{301}", "\u{200b}", "\u{e000}", "²", "١٢", "ǅ",
            ])
            .prop_map(String::from),
            any::<String>(),
            "[a-zA-Z0-9\\p{L}\\p{N}\\p{M}]{1,12}",
        ]
    }

    #[test]
    fn any_text_gives_a_runnable_expression_or_none() {
        let rt = runtime();
        let dir = tempfile::TempDir::new().expect("temp dir");
        let index = RefCell::new(FtsIndex::new(dir.path().join("memory_index.db")));
        let docs = [
            doc(
                "preferences.md",
                "Editor",
                "The user prefers helix as their editor.",
            ),
            doc(
                "history/2026-03-14.md",
                "2026-03-14 09:00",
                "The deploy did work; we ran it twice.",
            ),
            doc("projects.md", "東京", "Café naïve résumé 東京 🚀"),
        ];
        rt.block_on(index.borrow_mut().rebuild(&docs))
            .expect("rebuild");
        proptest!(ProptestConfig::with_cases(400), |(words in vec(word(), 0..=64))| {
            let text = words.join(" ");
            if let Some(expr) = match_expression(&text) {
                let res = rt.block_on(index.borrow_mut().search(&expr, 10));
                prop_assert!(res.is_ok(), "{text:?} -> {expr:?}: {res:?}");
            }
        });
    }

    #[test]
    fn ordinary_questions_match_and_a_bad_expression_is_not_damage() {
        let rt = runtime();
        let dir = tempfile::TempDir::new().expect("temp dir");
        let mut index = FtsIndex::new(dir.path().join("memory_index.db"));
        rt.block_on(async {
            index
                .rebuild(&[doc("preferences.md", "Editor", "The user prefers helix.")])
                .await
                .expect("rebuild");
            for q in [
                "which editor does the user prefer",
                "editor does",
                "the deploy does work",
            ] {
                let expr = match_expression(q).expect("words");
                index.search(&expr, 5).await.expect(q);
            }
            let expr = match_expression("which editor does the user prefer").expect("words");
            assert_eq!(index.search(&expr, 5).await.expect("search").len(), 1);
            // A malformed expression (never built by match_expression) is
            // the query's fault: the intact index is not damage.
            let err = index
                .search("\"editor\" (\"does\" OR \"do\")", 5)
                .await
                .expect_err("FTS5 rejects it");
            assert!(!index.search_error_is_damage(&err).await, "{err}");
            assert!(index.is_intact().await);
        });
    }
}
