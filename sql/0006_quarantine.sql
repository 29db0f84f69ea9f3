-- The quarantine lane (issue 41): a write the screen flagged on uncertain
-- evidence is kept here, never in the tables prompts are built from, until
-- a human releases it (replayed through its writer) or drops it, or it
-- expires after `security.quarantine_days`. `payload` is the write itself
-- (JSON), `text` what was screened, shown to the reviewer.
CREATE TABLE quarantine (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    layer      TEXT NOT NULL CHECK (layer IN ('semantic', 'episodic')),
    key        TEXT,
    text       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    rule       TEXT NOT NULL,
    category   TEXT,
    source     TEXT NOT NULL,
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX quarantine_created ON quarantine (created_at);
