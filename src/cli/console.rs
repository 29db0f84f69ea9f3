//! `kirocrew console`: the operator shell on the running daemon's
//! websocket console (`/api/console`, see [`crate::console`]).
//!
//! - no options: an interactive shell (rustyline: line editing, history in
//!   `$KIROCREW_HOME/console_history`, tab completion of the commands the
//!   daemon's `hello` lists); `subscribe audit` there prints events above
//!   the prompt as they come.
//! - `--exec "memory search deploy"`: one command, its output, its status.
//! - `--follow audit` (`--level debug` for `log`): tails a stream.
//!
//! The daemon is found like every client of it ([`crate::daemon_client`]):
//! down, unreachable or a wrong token exit 1 with the same words.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use serde_json::{json, Value};

use super::args::ConsoleArgs;
use super::console_line::{split_line, to_request, Line};
use crate::console::client::{ConsoleClient, ConsoleClientError};
use crate::daemon_client::Daemon;
use crate::home::DataHome;

/// Runs the console client.
pub(super) fn run(home: DataHome, args: ConsoleArgs) -> anyhow::Result<ExitCode> {
    let daemon = Daemon::discover(&home, Duration::from_secs(10))?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the console's runtime")?;
    let token_file = home.token_file().display().to_string();
    let connect = || ConsoleClient::connect(daemon.address(), daemon.token(), &token_file);
    if let Some(line) = args.exec {
        return runtime.block_on(async {
            let mut client = connect().await?;
            let code = exec(&mut client, &line).await;
            client.close().await;
            code
        });
    }
    if let Some(stream) = args.follow {
        return runtime.block_on(async {
            let mut client = connect().await?;
            follow(&mut client, &stream, &args.level).await
        });
    }
    let client = runtime.block_on(connect())?;
    interactive(&home, runtime, client)
}

/// One line: its output on stdout, an error on stderr; exit 1 on either
/// kind of failure.
async fn exec(client: &mut ConsoleClient, line: &str) -> anyhow::Result<ExitCode> {
    let words = split_line(line).map_err(anyhow::Error::msg)?;
    match to_request(&words) {
        Line::Show(text) => {
            eprint!("{text}");
            Ok(ExitCode::from(2))
        }
        Line::Request(cmd, args) => Ok(show_answer(client.request(&cmd, args).await?)),
    }
}

fn show_answer(result: Value) -> ExitCode {
    match result.get("output").and_then(Value::as_str) {
        Some(output) => print!("{output}"),
        None => println!("{result}"),
    }
    if result.get("exit_code").and_then(Value::as_u64).unwrap_or(0) == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn follow(client: &mut ConsoleClient, stream: &str, level: &str) -> anyhow::Result<ExitCode> {
    client
        .request("subscribe", json!({"stream": stream, "level": level}))
        .await?;
    loop {
        match client.next_event().await {
            Ok(frame) => println!("{}", event_line(&frame)),
            Err(ConsoleClientError::Closed(reason)) => {
                eprintln!(
                    "console closed: {}",
                    reason.as_deref().unwrap_or("connection ended")
                );
                return Ok(ExitCode::FAILURE);
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// One event or lag notice as a line.
fn event_line(frame: &Value) -> String {
    let stream = frame["stream"].as_str().unwrap_or("?");
    if frame["type"] == "lagged" {
        return format!(
            "[{stream}] lagged: missed {} events ({} since subscribing)",
            frame["missed"], frame["total_missed"]
        );
    }
    let data = &frame["data"];
    match stream {
        "log" => format!(
            "[log] {} {:5} {}: {}",
            data["ts"].as_str().unwrap_or(""),
            data["level"].as_str().unwrap_or(""),
            data["target"].as_str().unwrap_or(""),
            data["message"].as_str().unwrap_or("")
        ),
        "audit" => format!(
            "[audit] {} {} {} {} ({})",
            data["ts"].as_str().unwrap_or(""),
            data["event_type"].as_str().unwrap_or(""),
            data["memory_type"].as_str().unwrap_or(""),
            data["key"].as_str().unwrap_or(""),
            data["source"].as_str().unwrap_or("")
        ),
        _ => format!("[{stream}] {data}"),
    }
}

/// What the websocket thread sends the prompt.
type Answer = Result<Value, ConsoleClientError>;

fn interactive(
    home: &DataHome,
    runtime: tokio::runtime::Runtime,
    client: ConsoleClient,
) -> anyhow::Result<ExitCode> {
    use rustyline::error::ReadlineError;
    use rustyline::ExternalPrinter;

    let commands = super::console_shell::commands_of(&client.hello);
    let protocol = client.hello["protocol"].clone();
    let mut editor = rustyline::Editor::<super::console_shell::Completion, _>::new()
        .context("starting the line editor")?;
    editor.set_helper(Some(super::console_shell::Completion::new(commands)));
    let history = home.root().join("console_history");
    // No history yet is fine.
    let _ = editor.load_history(&history);
    let mut printer = editor.create_external_printer().ok();

    // The websocket lives on its own thread so pings are answered and
    // events printed while the prompt waits for a line.
    let (requests, mut incoming) = tokio::sync::mpsc::unbounded_channel::<(String, Value)>();
    let (answers, answered) = std::sync::mpsc::channel::<Answer>();
    let socket = std::thread::spawn(move || {
        runtime.block_on(async move {
            let mut client = client;
            loop {
                tokio::select! {
                    next = incoming.recv() => {
                        let Some((cmd, args)) = next else { break };
                        let answer = client.request(&cmd, args).await;
                        let closed = matches!(answer, Err(ConsoleClientError::Closed(_)));
                        if answers.send(answer).is_err() || closed {
                            break;
                        }
                    }
                    event = client.next_event() => match event {
                        Ok(frame) => {
                            let line = event_line(&frame);
                            match printer.as_mut() {
                                Some(p) => { let _ = p.print(line); }
                                None => println!("{line}"),
                            }
                        }
                        Err(e) => {
                            let _ = answers.send(Err(e));
                            break;
                        }
                    },
                }
            }
            client.close().await;
        });
    });

    println!("kirocrew console (protocol {protocol}); `help` lists the commands, Ctrl-D quits");
    let mut status = ExitCode::SUCCESS;
    loop {
        let line = match editor.readline("kirocrew> ") {
            Ok(line) => line,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e).context("reading a line"),
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let _ = editor.add_history_entry(trimmed);
        if matches!(trimmed, "exit" | "quit") {
            break;
        }
        if trimmed == "help" {
            println!("{}", super::console_shell::help(editor.helper()));
            continue;
        }
        let words = match split_line(trimmed) {
            Ok(words) => words,
            Err(e) => {
                eprintln!("error: {e}");
                continue;
            }
        };
        let (cmd, args) = match to_request(&words) {
            Line::Show(text) => {
                eprint!("{text}");
                continue;
            }
            Line::Request(cmd, args) => (cmd, args),
        };
        if requests.send((cmd, args)).is_err() {
            status = ExitCode::FAILURE;
            eprintln!("error: the console connection closed");
            break;
        }
        match answered.recv() {
            Ok(Ok(result)) => {
                show_answer(result);
            }
            Ok(Err(e @ ConsoleClientError::Closed(_))) => {
                eprintln!("error: {e}");
                status = ExitCode::FAILURE;
                break;
            }
            Ok(Err(e)) => eprintln!("error: {e}"),
            Err(_) => {
                eprintln!("error: the console connection closed");
                status = ExitCode::FAILURE;
                break;
            }
        }
    }
    let _ = editor.save_history(&history);
    drop(requests);
    let _ = socket.join();
    Ok(status)
}
