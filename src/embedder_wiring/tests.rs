use super::*;

#[test]
fn model_path_precedence() {
    let target = Path::new("/home/x/models/qwen.gguf");
    let env = choose_model(Some("/m/a.gguf"), "/m/b.gguf", target);
    assert_eq!(
        (env.path.as_path(), env.env_override, env.downloadable),
        (Path::new("/m/a.gguf"), true, false)
    );
    let cfg = choose_model(None, "/m/b.gguf", target);
    assert_eq!(
        (cfg.path.as_path(), cfg.env_override),
        (Path::new("/m/b.gguf"), false)
    );
    let default = choose_model(Some("  "), "", target);
    assert_eq!(
        (default.path.as_path(), default.downloadable),
        (target, true)
    );
}

fn backend(state: &'static str, error: Option<&str>) -> EmbedderStatus {
    EmbedderStatus {
        backend: kirocrew_actors::embedder::BackendStatus {
            state,
            model_id: Some("m".into()),
            dim: Some(384),
            weights: None,
            kernels: None,
            error: error.map(str::to_owned),
            path: Some("/m/m.gguf".into()),
            profile: None,
        },
        cache: Default::default(),
    }
}

fn download(step: DownloadStep, error: Option<&str>) -> DownloadStatus {
    DownloadStatus {
        step,
        error: error.map(str::to_owned),
        attempt: 0,
        max_attempts: 0,
        bytes_downloaded: 0,
        bytes_total: None,
        path: None,
    }
}

#[test]
fn a_serving_model_is_not_reported_as_an_error() {
    // A custom model serves while downloads of the default are disabled.
    let status = EmbeddingStatus::assemble(
        Some(backend("ready", None)),
        Some(download(DownloadStep::Failed, Some("download is disabled"))),
        ReembedStatus::default(),
        true,
    );
    assert_eq!(
        (status.setup_step, status.error, status.can_retry),
        ("done", None, false)
    );
    assert_eq!(status.download_step, DownloadStep::Failed);

    // Nothing serving: the download's error is the one to show.
    let status = EmbeddingStatus::assemble(
        Some(backend("failed", Some("not a GGUF"))),
        Some(download(DownloadStep::Failed, Some("sha256 mismatch"))),
        ReembedStatus::default(),
        false,
    );
    assert_eq!(status.setup_step, "error");
    assert_eq!(status.error.as_deref(), Some("sha256 mismatch"));
    assert!(status.can_retry);

    // No download involved: the load error shows.
    let status = EmbeddingStatus::assemble(
        Some(backend("failed", Some("not a GGUF"))),
        Some(download(DownloadStep::Idle, None)),
        ReembedStatus::default(),
        true,
    );
    assert_eq!(
        (status.setup_step, status.error.as_deref()),
        ("error", Some("not a GGUF"))
    );
}

#[test]
fn a_model_from_a_path_reports_no_download_it_never_wanted() {
    let disabled = || Some(download(DownloadStep::Failed, Some("download is disabled")));
    // A custom file that does not load: its own error shows, no download.
    let status = EmbeddingStatus::assemble(
        Some(backend("failed", Some("/m/custom.gguf: No such file"))),
        relevant_download(disabled(), false),
        ReembedStatus::default(),
        false,
    );
    assert_eq!(status.download_step, DownloadStep::Idle);
    assert_eq!(status.download_attempt, 0);
    assert_eq!(
        status.error.as_deref(),
        Some("/m/custom.gguf: No such file")
    );
    // The default file is what serves: its disabled download is the news.
    let status = EmbeddingStatus::assemble(
        Some(backend("failed", Some("missing"))),
        relevant_download(disabled(), true),
        ReembedStatus::default(),
        false,
    );
    assert_eq!(status.download_step, DownloadStep::Failed);
    assert_eq!(status.error.as_deref(), Some("download is disabled"));
    // A real attempt at the default stays visible whatever serves.
    let mut tried = download(DownloadStep::Failed, Some("sha256 mismatch"));
    tried.attempt = 3;
    assert!(relevant_download(Some(tried), false).is_some());
    let busy = download(DownloadStep::Downloading, None);
    assert!(relevant_download(Some(busy), false).is_some());
}
