-- Episodic search support: a change sequence (for the VectorStore's
-- in-memory vector mirror, as for semantic rows) and an FTS5 index over text
-- and tags (the keyword rung of the fallback ladder: OR logic, BM25 rank,
-- porter stemming).

ALTER TABLE episodic_memories ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;

CREATE INDEX episodic_memories_seq ON episodic_memories (seq);

CREATE TABLE episodic_seq (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;

INSERT INTO episodic_seq (id, value) VALUES (1, 0);

CREATE TRIGGER episodic_memories_seq_on_insert AFTER INSERT ON episodic_memories
BEGIN
    UPDATE episodic_seq SET value = value + 1 WHERE id = 1;
    UPDATE episodic_memories SET seq = (SELECT value FROM episodic_seq WHERE id = 1)
    WHERE id = NEW.id;
END;

CREATE TRIGGER episodic_memories_seq_on_update
AFTER UPDATE OF text, tags, importance, created_at, is_deleted, embedding, embedding_space
ON episodic_memories
BEGIN
    UPDATE episodic_seq SET value = value + 1 WHERE id = 1;
    UPDATE episodic_memories SET seq = (SELECT value FROM episodic_seq WHERE id = 1)
    WHERE id = NEW.id;
END;

CREATE VIRTUAL TABLE episodic_fts USING fts5(
    text, tags,
    content = 'episodic_memories', content_rowid = 'id',
    tokenize = 'porter unicode61'
);

CREATE TRIGGER episodic_fts_on_insert AFTER INSERT ON episodic_memories
BEGIN
    INSERT INTO episodic_fts (rowid, text, tags) VALUES (NEW.id, NEW.text, NEW.tags);
END;

CREATE TRIGGER episodic_fts_on_update AFTER UPDATE OF text, tags ON episodic_memories
BEGIN
    INSERT INTO episodic_fts (episodic_fts, rowid, text, tags)
    VALUES ('delete', OLD.id, OLD.text, OLD.tags);
    INSERT INTO episodic_fts (rowid, text, tags) VALUES (NEW.id, NEW.text, NEW.tags);
END;

CREATE TRIGGER episodic_fts_on_delete AFTER DELETE ON episodic_memories
BEGIN
    INSERT INTO episodic_fts (episodic_fts, rowid, text, tags)
    VALUES ('delete', OLD.id, OLD.text, OLD.tags);
END;
