-- Lessons live in semantic_memory under `lesson.<blake3 of the rule>`; the
-- value is the spec's text ("rule" or "rule — NOT: negative"). Their
-- category (tool / preference / knowledge) has no place in that text, so it
-- sits beside the row here, keyed by the same key. A lesson row without a
-- category row (e.g. restored by a plain semantic import) reads as
-- `knowledge`.

CREATE TABLE lesson_meta (
    key      TEXT PRIMARY KEY NOT NULL,
    category TEXT NOT NULL CHECK (category IN ('tool', 'preference', 'knowledge'))
) STRICT;
