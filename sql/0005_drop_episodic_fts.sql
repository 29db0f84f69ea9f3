-- Episodic keyword search moved into the store's in-memory mirror (BM25
-- postings kept by the change sequence, issue 13): the FTS5 table and the
-- triggers that kept it in step only cost every write now.
DROP TRIGGER IF EXISTS episodic_fts_on_insert;
DROP TRIGGER IF EXISTS episodic_fts_on_update;
DROP TRIGGER IF EXISTS episodic_fts_on_delete;
DROP TABLE IF EXISTS episodic_fts;
