-- Refused writes (injection_blocked, conflict_skip) are bounded apart from
-- everything else, so a flood of refusals can never push the history of
-- accepted writes out of the audit trail (issue 10). Each class keeps the
-- newest `memory.max_events` rows; the index serves that prune.
ALTER TABLE memory_events ADD COLUMN refusal INTEGER NOT NULL DEFAULT 0 CHECK (refusal IN (0, 1));
UPDATE memory_events SET refusal = 1 WHERE event_type IN ('injection_blocked', 'conflict_skip');
CREATE INDEX memory_events_class ON memory_events (refusal, id);
