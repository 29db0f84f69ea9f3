-- Skills join the quarantine lane (issue 42, item 9): a SKILL.md written
-- with a flagged body or description is held here (layer 'skill', key =
-- the skill's name) until a human releases it into the skills directory or
-- drops it. SQLite cannot alter a CHECK constraint, so the table is
-- rebuilt; its rows and its id sequence (ids named in audit events are
-- never handed out twice) are carried over.
CREATE TABLE quarantine_next (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    layer      TEXT NOT NULL CHECK (layer IN ('semantic', 'episodic', 'skill')),
    key        TEXT,
    text       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    rule       TEXT NOT NULL,
    category   TEXT,
    source     TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
INSERT INTO quarantine_next (id, layer, key, text, payload, rule, category, source, created_at)
    SELECT id, layer, key, text, payload, rule, category, source, created_at FROM quarantine;
DELETE FROM sqlite_sequence WHERE name = 'quarantine_next';
INSERT INTO sqlite_sequence (name, seq)
    SELECT 'quarantine_next', seq FROM sqlite_sequence WHERE name = 'quarantine';
DROP TABLE quarantine;
ALTER TABLE quarantine_next RENAME TO quarantine;
CREATE INDEX quarantine_created ON quarantine (created_at);
