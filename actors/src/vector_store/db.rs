//! memory.db as a whole: opening, migrations, closing, and store-wide
//! counts. Each domain keeps its own SQL in its `db.rs`
//! (`semantic/db.rs`, `episodic/db.rs`, `lessons/db.rs`, `space/db.rs`,
//! events in `audit.rs`).
//!
//! These functions take a pool or a connection and never hold state, so
//! the actor decides ordering and atomicity (one `BEGIN IMMEDIATE`
//! transaction per read-modify-write; the IMMEDIATE lock also orders us
//! against a one-shot CLI process writing the same file).

use std::path::Path;
use std::time::Duration;

use sqlx::migrate::Migrator;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use super::error::VectorStoreError;

/// The schema migrations in `sql/`, embedded at compile time.
pub(super) static MIGRATOR: Migrator = sqlx::migrate!("../sql");

/// How long a statement waits for another process's write lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating if needed) memory.db in WAL mode and applies migrations.
pub(super) async fn open_pool(path: &Path) -> Result<SqlitePool, VectorStoreError> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .busy_timeout(BUSY_TIMEOUT)
        .foreign_keys(true)
        // 16 MiB page cache per connection. No mmap of memory.db: a file
        // truncated in place under a mapping (another process, a restore
        // tool) turns the next read into SIGBUS and kills the daemon,
        // where a read through pread fails with an error the store
        // reports; the hot reads are served by the in-actor mirrors anyway.
        .pragma("cache_size", "-16384");
    let pool = SqlitePoolOptions::new()
        .max_connections(4)
        .min_connections(1)
        .connect_with(options)
        .await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// Checkpoints the WAL into the main file and closes every connection, so a
/// stopped daemon leaves a self-contained memory.db behind.
pub(super) async fn close_pool(pool: &SqlitePool) -> Result<(), VectorStoreError> {
    sqlx::query("PRAGMA wal_checkpoint(TRUNCATE)")
        .execute(pool)
        .await?;
    pool.close().await;
    Ok(())
}

/// Scalar counts for the stats report.
pub(super) async fn count(pool: &SqlitePool, sql: &str) -> Result<i64, VectorStoreError> {
    Ok(sqlx::query_scalar(sql).fetch_one(pool).await?)
}

/// Active semantic rows per prefix (the text before the first dot).
pub(super) async fn count_by_prefix(
    pool: &SqlitePool,
) -> Result<Vec<(String, i64)>, VectorStoreError> {
    Ok(sqlx::query_as(
        "SELECT substr(key, 1, instr(key, '.') - 1) AS prefix, COUNT(*)
         FROM semantic_memory WHERE is_deleted = 0 GROUP BY prefix ORDER BY prefix",
    )
    .fetch_all(pool)
    .await?)
}

/// A cheap liveness probe of the connection pool.
pub(super) async fn ping(pool: &SqlitePool) -> Result<(), VectorStoreError> {
    sqlx::query("SELECT 1").execute(pool).await?;
    Ok(())
}
