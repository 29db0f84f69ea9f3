//! The skills actor's prompt-side protocol: what a new session gets, the
//! `$skillname` tokens and trigger matches of a message, direct-read
//! crediting from tool-call events, and the ledger's hits and flushes.
//!
//! Only delivered bodies earn a hit: a `$name` body, a trigger match that
//! injects its body, a completed direct read. A pointer-only match, an
//! `always` body and a search record nothing.

use actix::prelude::*;
use serde_json::json;

use super::actor::SkillLedger;
use super::context::{dollar_tokens, full_index, lazy_index};
use super::crediting::{mentions_skill_file, read_paths, resolve_path};
use super::error::SkillError;
use super::triggers::{hint_block, match_triggers, pointer_line, Candidate};
use super::types::{
    MessageSkills, SessionSkills, SkillBody, ToolEvent, ToolEventOutcome, TriggeredSkills,
};

/// The skills section of a new session within `budget` characters (used
/// only under `skills.lazy_load`).
#[derive(Debug, Message)]
#[rtype(result = "Result<SessionSkills, SkillError>")]
pub(crate) struct GetSessionSkills {
    /// Characters the skills section may use.
    pub budget: usize,
}

/// The bodies a message's `$name` tokens ask for (each earns a hit).
#[derive(Debug, Message)]
#[rtype(result = "Result<Vec<SkillBody>, SkillError>")]
pub(crate) struct ResolveDollarSkills {
    /// The user message.
    pub message: String,
}

/// One skill's body by exact name, delivered and counted as a `$name`
/// token would be (the MCP `skill_read` tool).
#[derive(Debug, Message)]
#[rtype(result = "Result<SkillBody, SkillError>")]
pub(crate) struct DeliverSkill {
    /// The skill's name.
    pub name: String,
}

/// The trigger matches of a message, split into bodies and pointers.
#[derive(Debug, Message)]
#[rtype(result = "Result<TriggeredSkills, SkillError>")]
pub(crate) struct MatchTriggers {
    /// The user message.
    pub message: String,
}

/// What a message asks for and matches, `$name` bodies and trigger
/// matches together, recording nothing: the context builder records what
/// it then delivers ([`RecordSkillUse`]), once per skill, after its cap.
#[derive(Debug, Message)]
#[rtype(result = "Result<MessageSkills, SkillError>")]
pub(crate) struct GetMessageSkills {
    /// The user message.
    pub message: String,
}

/// Counts deliveries the caller made itself.
#[derive(Debug, Message)]
#[rtype(result = "Result<usize, SkillError>")]
pub(crate) struct RecordSkillUse {
    /// The skills whose bodies were delivered.
    pub names: Vec<String>,
}

/// One gateway tool-call event (both crediting phases).
#[derive(Debug, Message)]
#[rtype(result = "Result<ToolEventOutcome, SkillError>")]
pub(crate) struct ObserveToolEvent {
    /// The gateway event.
    pub event: ToolEvent,
}

/// Writes the ledger now.
#[derive(Debug, Message)]
#[rtype(result = "Result<bool, SkillError>")]
pub(crate) struct FlushLedger;

/// Flushes and stops the actor.
#[derive(Debug, Message)]
#[rtype(result = "Result<(), SkillError>")]
pub(crate) struct CloseSkills;

const TERMINAL_FAILURES: &[&str] = &[
    "failed",
    "error",
    "errored",
    "cancelled",
    "canceled",
    "denied",
    "rejected",
];
const IN_FLIGHT: &[&str] = &["pending", "in_progress", "running"];

impl Handler<GetSessionSkills> for SkillLedger {
    type Result = Result<SessionSkills, SkillError>;

    fn handle(&mut self, msg: GetSessionSkills, _: &mut Context<Self>) -> Self::Result {
        let entries = self.catalog.entries();
        let always: Vec<SkillBody> = entries
            .iter()
            .filter(|e| e.meta.always)
            .filter_map(|e| {
                Self::load_body(e)
                    .map_err(|err| tracing::warn!(skill = %e.name, error = %err, "always-on skill unreadable"))
                    .ok()
            })
            .collect();
        let ledger_ranked = self.ledger.degraded_reason().is_none();
        if !self.config.lazy_load {
            let (index, listed) = full_index(&entries);
            return Ok(SessionSkills {
                always,
                index,
                listed,
                omitted: 0,
                ledger_ranked: false,
                full_index: true,
            });
        }
        let used: usize = always.iter().map(|b| b.body.len()).sum();
        let now = self.config.clock.now().timestamp();
        let ledger = ledger_ranked.then_some(&self.ledger);
        let (index, listed, omitted) = lazy_index(&entries, ledger, now, msg.budget, used);
        Ok(SessionSkills {
            always,
            index,
            listed,
            omitted,
            ledger_ranked,
            full_index: false,
        })
    }
}

impl Handler<ResolveDollarSkills> for SkillLedger {
    type Result = Result<Vec<SkillBody>, SkillError>;

    fn handle(&mut self, msg: ResolveDollarSkills, ctx: &mut Context<Self>) -> Self::Result {
        let bodies = self.dollar_bodies(&msg.message);
        let names: Vec<String> = bodies.iter().map(|b| b.name.clone()).collect();
        self.record(&names, ctx);
        Ok(bodies)
    }
}

impl Handler<DeliverSkill> for SkillLedger {
    type Result = Result<SkillBody, SkillError>;

    fn handle(&mut self, msg: DeliverSkill, ctx: &mut Context<Self>) -> Self::Result {
        let entry = self
            .catalog
            .get(&msg.name)
            .ok_or_else(|| SkillError::NotFound(msg.name.clone()))?;
        let body = Self::load_body(&entry)?;
        self.record(std::slice::from_ref(&body.name), ctx);
        Ok(body)
    }
}

impl Handler<MatchTriggers> for SkillLedger {
    type Result = Result<TriggeredSkills, SkillError>;

    fn handle(&mut self, msg: MatchTriggers, ctx: &mut Context<Self>) -> Self::Result {
        let out = self.trigger_matches(&msg.message);
        let delivered: Vec<String> = out.bodies.iter().map(|b| b.name.clone()).collect();
        self.record(&delivered, ctx);
        Ok(out)
    }
}

impl Handler<GetMessageSkills> for SkillLedger {
    type Result = Result<MessageSkills, SkillError>;

    fn handle(&mut self, msg: GetMessageSkills, _: &mut Context<Self>) -> Self::Result {
        Ok(MessageSkills {
            dollar: self.dollar_bodies(&msg.message),
            triggered: self.trigger_matches(&msg.message),
        })
    }
}

impl SkillLedger {
    /// The bodies a message's `$name` tokens name (unreadable ones logged
    /// and left out).
    fn dollar_bodies(&mut self, message: &str) -> Vec<SkillBody> {
        let mut bodies = Vec::new();
        for name in dollar_tokens(message) {
            let Some(entry) = self.catalog.get(&name) else {
                continue;
            };
            match Self::load_body(&entry) {
                Ok(body) => bodies.push(body),
                Err(e) => tracing::warn!(skill = %name, error = %e, "$skill body unreadable"),
            }
        }
        bodies
    }

    /// The trigger matches of a message (one security event for the
    /// matched set), recording nothing.
    fn trigger_matches(&mut self, message: &str) -> TriggeredSkills {
        if self.config.max_triggered == 0 {
            return TriggeredSkills::default();
        }
        let entries = self.catalog.entries();
        let candidates = entries.iter().map(|e| Candidate {
            name: &e.name,
            always: e.meta.always,
            triggers: &e.triggers,
        });
        let matched: Vec<String> = match_triggers(candidates, message, self.config.max_triggered)
            .into_iter()
            .map(|(n, _)| n.to_owned())
            .collect();
        if matched.is_empty() {
            return TriggeredSkills::default();
        }
        let mut out = TriggeredSkills::default();
        let mut modes = Vec::new();
        for name in &matched {
            let Some(e) = entries.iter().find(|e| &e.name == name) else {
                continue;
            };
            if e.meta.inject_on_trigger {
                match Self::load_body(e) {
                    Ok(body) => {
                        out.bodies.push(body);
                        modes.push(json!({"skill": name, "delivered": "body"}));
                    }
                    Err(err) => {
                        tracing::warn!(skill = %name, error = %err, "triggered skill unreadable")
                    }
                }
            } else {
                out.pointers.push(pointer_line(
                    &e.name,
                    e.meta.description.as_deref(),
                    &e.path.display().to_string(),
                    &e.dir.display().to_string(),
                ));
                modes.push(json!({"skill": name, "delivered": "pointer"}));
            }
        }
        out.hint = hint_block(&out.pointers);
        // One event for the whole matched set; none when nothing matched.
        self.security_event(
            "skill_trigger",
            "context_builder",
            "matched",
            json!({ "skills": modes }),
        );
        out
    }
}

impl Handler<RecordSkillUse> for SkillLedger {
    type Result = Result<usize, SkillError>;

    fn handle(&mut self, msg: RecordSkillUse, ctx: &mut Context<Self>) -> Self::Result {
        Ok(self.record(&msg.names, ctx))
    }
}

impl Handler<ObserveToolEvent> for SkillLedger {
    type Result = Result<ToolEventOutcome, SkillError>;

    fn handle(&mut self, msg: ObserveToolEvent, ctx: &mut Context<Self>) -> Self::Result {
        let ev = msg.event;
        let id = ev.tool_call_id.trim().to_owned();
        if id.is_empty() || id.len() > 256 {
            return Err(SkillError::InvalidToolEvent(
                "tool_call_id must be 1 to 256 characters".into(),
            ));
        }
        let status = ev.status.as_deref().map(str::to_ascii_lowercase);
        let status = status.as_deref();
        if let Some(s) = status {
            if s != "completed" && !TERMINAL_FAILURES.contains(&s) && !IN_FLIGHT.contains(&s) {
                return Err(SkillError::InvalidToolEvent(format!(
                    "unknown status {s:?}"
                )));
            }
        }
        let mut outcome = ToolEventOutcome {
            tool_call_id: id.clone(),
            ..Default::default()
        };
        if self.credited_calls.contains(&id) {
            outcome.duplicate = true;
            return Ok(outcome);
        }
        // The cheap gate: most tool calls touch no skill at all.
        let raw_text = ev
            .raw_input
            .as_ref()
            .map(|v| v.to_string())
            .unwrap_or_default();
        let mentions = mentions_skill_file(&raw_text)
            || ev.command.as_deref().is_some_and(mentions_skill_file);
        let mut keys = self.pending_reads.pop(&id).unwrap_or_default();
        if mentions {
            let paths = read_paths(
                &ev.tool_name,
                ev.kind.as_deref(),
                ev.raw_input.as_ref(),
                ev.command.as_deref(),
            );
            let served = self.served();
            let home = self.config.user_home.clone();
            let found: Vec<String> = paths
                .iter()
                .filter_map(|p| resolve_path(p, home.as_deref(), &served))
                .collect();
            if found.is_empty() && keys.is_empty() {
                tracing::debug!(tool = %ev.tool_name, tool_call_id = %id, "tool call names a SKILL.md but delivers no served skill (not a read, or a renamed tool)");
            }
            keys.extend(found);
            keys.sort();
            keys.dedup();
        }
        outcome.candidates = keys.clone();
        match status {
            Some("completed") => {
                self.credited_calls.put(id, ());
                self.record(&keys, ctx);
                outcome.credited = keys;
            }
            Some(s) if TERMINAL_FAILURES.contains(&s) => {}
            _ => {
                if !keys.is_empty() {
                    self.pending_reads.put(id, keys);
                }
            }
        }
        Ok(outcome)
    }
}

impl Handler<FlushLedger> for SkillLedger {
    type Result = Result<bool, SkillError>;

    fn handle(&mut self, _: FlushLedger, ctx: &mut Context<Self>) -> Self::Result {
        if let Some(h) = self.flush_scheduled.take() {
            ctx.cancel_future(h);
        }
        Ok(self.flush())
    }
}

impl Handler<CloseSkills> for SkillLedger {
    type Result = Result<(), SkillError>;

    fn handle(&mut self, _: CloseSkills, ctx: &mut Context<Self>) -> Self::Result {
        self.flush();
        ctx.stop();
        Ok(())
    }
}
