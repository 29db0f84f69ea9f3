-- memory.db: semantic key-value memory, episodic memory and the audit trail.
-- Owned by the VectorStore actor. Forward-only: later changes get new files.
--
-- Timestamps are RFC 3339 UTC text with microseconds and a Z suffix (fixed
-- width, so text order is time order). Values are canonical compact JSON.
-- Vectors are little-endian f32 BLOBs; `embedding_space` names the model
-- space (model id and dimension) a vector was made in, so vectors from a
-- superseded model are never compared with current ones.

CREATE TABLE semantic_memory (
    key             TEXT PRIMARY KEY NOT NULL,
    value           TEXT NOT NULL,
    confidence      REAL NOT NULL CHECK (confidence >= 0.0 AND confidence <= 1.0),
    source          TEXT NOT NULL,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    is_deleted      INTEGER NOT NULL DEFAULT 0 CHECK (is_deleted IN (0, 1)),
    embedding       BLOB,
    embedding_space TEXT,
    seq             INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX semantic_memory_recency ON semantic_memory (is_deleted, updated_at DESC);

-- Change sequence: every insert or change of a semantic row stamps it with
-- the next value of this counter, so a reader that remembers the highest
-- `seq` it has seen can fetch exactly the rows changed since (the
-- VectorStore's in-memory ranking mirror), whichever process wrote them.
CREATE TABLE semantic_seq (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
) STRICT;

INSERT INTO semantic_seq (id, value) VALUES (1, 0);

CREATE INDEX semantic_memory_seq ON semantic_memory (seq);

CREATE TRIGGER semantic_memory_seq_on_insert AFTER INSERT ON semantic_memory
BEGIN
    UPDATE semantic_seq SET value = value + 1 WHERE id = 1;
    UPDATE semantic_memory SET seq = (SELECT value FROM semantic_seq WHERE id = 1)
    WHERE key = NEW.key;
END;

-- `seq` itself is not in the column list, so the trigger's own update does
-- not fire it again.
CREATE TRIGGER semantic_memory_seq_on_update
AFTER UPDATE OF value, confidence, source, created_at, updated_at, is_deleted, embedding, embedding_space
ON semantic_memory
BEGIN
    UPDATE semantic_seq SET value = value + 1 WHERE id = 1;
    UPDATE semantic_memory SET seq = (SELECT value FROM semantic_seq WHERE id = 1)
    WHERE key = NEW.key;
END;

CREATE TABLE episodic_memories (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    text            TEXT NOT NULL,
    tags            TEXT NOT NULL DEFAULT '[]',
    importance      REAL NOT NULL DEFAULT 0.5 CHECK (importance >= 0.0 AND importance <= 1.0),
    content_hash    TEXT NOT NULL,
    source          TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    last_accessed   TEXT,
    is_deleted      INTEGER NOT NULL DEFAULT 0 CHECK (is_deleted IN (0, 1)),
    embedding       BLOB,
    embedding_space TEXT
) STRICT;

CREATE INDEX episodic_memories_active ON episodic_memories (is_deleted, importance, created_at);
CREATE INDEX episodic_memories_hash ON episodic_memories (content_hash);

CREATE TABLE memory_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    event_type  TEXT NOT NULL,
    memory_type TEXT NOT NULL,
    key         TEXT NOT NULL DEFAULT '',
    old_value   TEXT,
    new_value   TEXT,
    source      TEXT NOT NULL DEFAULT '',
    ts          TEXT NOT NULL
) STRICT;

-- The active embedding space and its generation counter; one row.
CREATE TABLE embedding_space (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    model_id   TEXT,
    dim        INTEGER,
    generation INTEGER NOT NULL DEFAULT 0
) STRICT;

INSERT INTO embedding_space (id, model_id, dim, generation) VALUES (1, NULL, NULL, 0);
