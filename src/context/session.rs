//! `build_session_context` (spec "Context Builder → New session"): thread
//! history at the top (skipped on resume), then the conduct group, the
//! scope note, the agent prompt, the project group, the memory group
//! (preferences, projects, recent history, semantic, episodic when a query
//! is given, recent session context, other chat tabs), and the lessons
//! group — each section under its cap, all under the global ceiling. A
//! lower layer's line that a higher one contradicts is left out
//! (`supersede.rs`).

use kirocrew_actors::context_block::BlockItem;
use kirocrew_actors::memory_files::{ContextCaps, ContextSection};
use kirocrew_actors::vector_store::{QueryEmbedding, VectorStoreHandle};

use super::assemble::{Assembly, Parts};
use super::caps::{resolve_caps, ResolvedCaps};
use super::conduct::{date_section, language_section, workspace_section, Runtime, CRITICAL_RULES};
use super::groups::ContextGroups;
use super::history::{active_others, other_tabs, recent_sessions, HistoryMessage};
use super::history::{
    ACTIVE_SESSION_WINDOW, OTHER_SESSIONS, OTHER_SESSION_TURNS, THREAD_HISTORY_MESSAGES,
};
use super::lessons::lessons_section;
use super::models::resolve_model_window;
use super::project::{project_lines, steering};
use super::receipt::{EpisodicReceipt, Receipt};
use super::sources::ContextSources;

/// What the gateway asks for at session start.
#[derive(Debug, Clone, Default)]
pub struct SessionRequest {
    /// The session key.
    pub session_key: String,
    /// The first message (the query for memory ranking); may be empty.
    pub message: String,
    /// The model, for its window and `[RUNTIME]`.
    pub model: Option<String>,
    /// An explicit window in tokens (wins over the model's).
    pub model_window: Option<u64>,
    /// Which switchable groups to include.
    pub groups: ContextGroups,
    /// Restored session: skip only the thread history.
    pub resumed: bool,
    /// The agent's own prompt.
    pub agent_prompt: Option<String>,
    /// Thread history given by the caller (else the transcript's).
    pub thread_history: Option<Vec<HistoryMessage>>,
    /// Trusted surface metadata.
    pub runtime_source: Option<String>,
    /// UI language.
    pub ui_language: Option<String>,
    /// The user the session belongs to (for `[Other chat tabs]`).
    pub user: Option<String>,
    /// The agent backend (`claude_code` gets steering).
    pub backend: Option<String>,
}

/// A built context and its receipt.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BuiltContext {
    /// The text to send.
    pub context: String,
    /// What went in and what did not.
    pub receipt: Receipt,
}

/// The caps and ceiling for a request.
pub(crate) fn caps_for(
    src: &ContextSources,
    model: Option<&str>,
    window: Option<u64>,
) -> (Option<u64>, ResolvedCaps) {
    let window = window
        .filter(|w| *w > 0)
        .or_else(|| resolve_model_window(model, &src.settings.model_windows));
    (window, resolve_caps(window))
}

/// Builds the session-start context.
pub async fn build_session_context(src: &ContextSources, req: &SessionRequest) -> BuiltContext {
    let (window, caps) = caps_for(src, req.model.as_deref(), req.model_window);
    let ceiling = caps.ceiling(src.settings.lazy_load);
    let groups = req.groups;
    let query = src
        .store
        .embed_query_within(&req.message, src.settings.embed_deadline)
        .await;
    let mut a = Assembly::default();
    let mut thread_receipt = None;

    if !req.resumed {
        let messages = match &req.thread_history {
            Some(m) => m.clone(),
            None => src
                .transcripts
                .recent(&req.session_key, THREAD_HISTORY_MESSAGES)
                .await
                .unwrap_or_default()
                .iter()
                .map(HistoryMessage::from)
                .collect(),
        };
        let start = messages.len().saturating_sub(THREAD_HISTORY_MESSAGES);
        let section =
            super::compress::thread_section(src.compressor.as_ref(), &messages[start..], &caps)
                .await;
        a.push(
            "thread_history",
            "conversation",
            Some(section.cap),
            &section.text,
            section.items,
        );
        if !messages.is_empty() {
            thread_receipt = Some(section.receipt);
        }
    }

    push_conduct(&mut a, src, req, &groups);
    // The owners answer concurrently; the sections go in in spec order.
    let (skills, project, memory, lessons) = tokio::join!(
        super::skills::session_section(&src.skills, caps.skills),
        async {
            let mut parts = Parts::default();
            if groups.project {
                push_project(&mut parts, src, req, &caps).await;
            }
            parts
        },
        async {
            let mut parts = Parts::default();
            let episodic = if groups.memory {
                push_memory(&mut parts, src, req, &caps, &query).await
            } else {
                EpisodicReceipt::skipped(
                    !req.message.trim().is_empty(),
                    "session_start",
                    "the memory group is withheld".into(),
                )
            };
            (parts, episodic)
        },
        async {
            if groups.lessons {
                Some(
                    lessons_section(
                        &src.store,
                        &src.lessons_file,
                        &req.message,
                        caps.lessons,
                        &query,
                    )
                    .await,
                )
            } else {
                None
            }
        },
    );
    let (text, items) = skills;
    a.push("skills", "conduct", Some(caps.skills), &text, items);
    if let Some(prompt) = req.agent_prompt.as_deref().filter(|p| !p.trim().is_empty()) {
        let text = super::lessons::cap_with_marker(
            prompt.trim(),
            caps.steering,
            "…[agent prompt truncated]",
        );
        a.push(
            "agent_prompt",
            "conduct",
            Some(caps.steering),
            &text,
            Vec::new(),
        );
    }
    a.extend(project);
    let (mut memory, episodic) = memory;
    super::supersede::apply(&mut memory, lessons.as_ref().map(|(text, _)| text.as_str()));
    a.extend(memory);
    if let Some((text, items)) = lessons {
        a.push("lessons", "lessons", Some(caps.lessons), &text, items);
    }

    let (context, sections, truncated) = a.finish(ceiling);
    BuiltContext {
        receipt: Receipt {
            model_window: window,
            ceiling,
            total_chars: context.chars().count(),
            query_embedding: query.status,
            withheld_groups: groups.withheld(),
            truncated_at_ceiling: truncated,
            thread_history: thread_receipt,
            episodic: Some(episodic),
            sections,
        },
        context,
    }
}

fn push_conduct(
    a: &mut Assembly,
    src: &ContextSources,
    req: &SessionRequest,
    groups: &ContextGroups,
) {
    a.push(
        "critical_rules",
        "conduct",
        None,
        CRITICAL_RULES,
        Vec::new(),
    );
    a.push(
        "current_date",
        "conduct",
        None,
        &date_section(src.clock.now()),
        Vec::new(),
    );
    let runtime = Runtime {
        session_key: req.session_key.clone(),
        source: req.runtime_source.clone(),
        model: req.model.clone(),
    };
    a.push("runtime", "conduct", None, &runtime.section(), Vec::new());
    a.push(
        "ui_language",
        "conduct",
        None,
        &language_section(req.ui_language.as_deref()),
        Vec::new(),
    );
    let project = src
        .settings
        .project_dir
        .as_ref()
        .map(|p| p.display().to_string());
    a.push(
        "workspace_identity",
        "conduct",
        None,
        &workspace_section(&src.settings.data_home, project.as_deref()),
        Vec::new(),
    );
    a.push(
        "context_scope",
        "conduct",
        None,
        &groups.scope_section(),
        Vec::new(),
    );
}

async fn push_project(
    a: &mut Parts,
    src: &ContextSources,
    req: &SessionRequest,
    caps: &ResolvedCaps,
) {
    let Some(dir) = &src.settings.project_dir else {
        return;
    };
    a.push("project", "project", None, &project_lines(dir), Vec::new());
    if req.backend.as_deref() == Some("claude_code") {
        let (text, items) = steering(dir, &src.reader, caps.steering).await;
        a.push("steering", "project", Some(caps.steering), &text, items);
    }
}

async fn push_memory(
    a: &mut Parts,
    src: &ContextSources,
    req: &SessionRequest,
    caps: &ResolvedCaps,
    query: &QueryEmbedding,
) -> EpisodicReceipt {
    let file_caps = ContextCaps {
        preferences: caps.preferences,
        projects: caps.projects,
        history: caps.daily_history,
    };
    let (files, semantic, episodic, sessions) = tokio::join!(
        src.files.context(file_caps),
        src.store.semantic_block(&req.message, caps.semantic, query),
        episodic_if_query(&src.store, &req.message, caps.episodic_inject(), query),
        src.transcripts.sessions(),
    );
    match files {
        Ok(ctx) => {
            for section in &ctx.sections {
                let (name, cap) = match section.title {
                    "Preferences" => ("preferences", caps.preferences),
                    "Projects" => ("projects", caps.projects),
                    _ => ("recent_history", caps.daily_history),
                };
                a.push(
                    name,
                    "memory",
                    Some(cap),
                    &render_file_section(section),
                    history_items(section),
                );
            }
        }
        Err(e) => tracing::warn!(error = %e, "Markdown memory left out of the context"),
    }
    match semantic {
        Ok(block) => a.push(
            "semantic",
            "memory",
            Some(caps.semantic),
            &block.text,
            block.items,
        ),
        Err(e) => tracing::warn!(error = %e, "semantic memory left out of the context"),
    }
    // A session start with a message is that session's first message.
    let episodic = match episodic {
        None => EpisodicReceipt::skipped(
            false,
            "session_start",
            "no message to rank episodic memory by".into(),
        ),
        Some(found) => {
            let found = match found {
                Ok(block) => {
                    Ok(a.push_block("episodic", "memory", Some(caps.episodic_inject()), block))
                }
                Err(e) => Err(e.to_string()),
            };
            EpisodicReceipt::after_search(
                true,
                "session_start",
                "a session start with a message",
                found,
            )
        }
    };
    let sessions = sessions.unwrap_or_default();
    let since = src.clock.now() - ACTIVE_SESSION_WINDOW;
    let others = active_others(&sessions, req.session_key.trim(), since);
    let (text, items) = recent_sessions(&others);
    a.push("recent_session_context", "memory", None, &text, items);
    if let Some(user) = req.user.as_deref() {
        let mut tabs = Vec::new();
        for meta in others
            .iter()
            .filter(|m| m.user.as_deref() == Some(user))
            .take(OTHER_SESSIONS)
        {
            let turns = src
                .transcripts
                .recent(&meta.key, OTHER_SESSION_TURNS)
                .await
                .unwrap_or_default();
            tabs.push(((*meta).clone(), turns));
        }
        let (text, items) = other_tabs(&tabs);
        a.push("other_chat_tabs", "memory", None, &text, items);
    }
    episodic
}

async fn episodic_if_query(
    store: &VectorStoreHandle,
    message: &str,
    cap: usize,
    query: &QueryEmbedding,
) -> Option<
    Result<
        kirocrew_actors::context_block::ContextBlock,
        kirocrew_actors::vector_store::VectorStoreError,
    >,
> {
    if message.trim().is_empty() {
        return None;
    }
    Some(
        store
            .episodic_block(message, cap, query)
            .await
            .map(|(block, _)| block),
    )
}

/// A Markdown layer with its source citation.
pub(crate) fn render_file_section(s: &ContextSection) -> String {
    format!("## {}\n(source: {})\n{}", s.title, s.source, s.text)
}

/// The days of a history section (`### YYYY-MM-DD` headings), as items.
fn history_items(s: &ContextSection) -> Vec<BlockItem> {
    if s.title != "Recent History" {
        return Vec::new();
    }
    s.text
        .lines()
        .filter_map(|l| l.strip_prefix("### "))
        .map(|day| {
            let mut item = BlockItem::new(day.trim(), "history_day", None);
            item.included = true;
            item
        })
        .collect()
}
