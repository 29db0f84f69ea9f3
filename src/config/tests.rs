use super::*;

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect()
}

#[test]
fn defaults_deserialize_and_validate() {
    let loaded = merge(Map::new(), Vec::new()).unwrap();
    assert_eq!(loaded.settings.server.bind, "127.0.0.1");
    assert_eq!(loaded.settings.memory.max_events, 10_000);
    assert_eq!(loaded.settings.memory.history_idle_hours, 3.0);
    assert_eq!(loaded.settings.channels.observe_max_messages, 200);
    assert_eq!(
        loaded.settings.channels.observe_ttl(),
        std::time::Duration::from_secs(604_800)
    );
}

#[test]
fn file_overrides_defaults_and_env_overrides_file() {
    let file = serde_json::json!({"server": {"port": 9000}, "memory": {"history_idle_hours": 2}});
    let Value::Object(map) = file else {
        unreachable!()
    };
    let loaded = merge(map.clone(), Vec::new()).unwrap();
    assert_eq!(loaded.settings.server.port, 9000);
    assert_eq!(loaded.settings.memory.history_idle_hours, 2.0);
    let loaded = merge(map, env(&[("KIROCREW_SERVER__PORT", "9100")])).unwrap();
    assert_eq!(loaded.settings.server.port, 9100);
}

#[test]
fn unknown_file_keys_warn_but_wrong_types_fail() {
    let Value::Object(map) = serde_json::json!({"slack": {"x": 1}, "memory": {"nope": 1}}) else {
        unreachable!()
    };
    let loaded = merge(map, Vec::new()).unwrap();
    assert_eq!(loaded.warnings.len(), 2);
    let Value::Object(map) = serde_json::json!({"server": {"port": "80"}}) else {
        unreachable!()
    };
    assert!(matches!(
        merge(map, Vec::new()),
        Err(ConfigError::WrongType { .. })
    ));
    let Value::Object(map) = serde_json::json!({"server": {"port": 80.5}}) else {
        unreachable!()
    };
    assert!(merge(map, Vec::new()).is_err());
}

#[test]
fn env_parsing_follows_default_types() {
    let loaded = merge(
        Map::new(),
        env(&[
            ("KIROCREW_AUTH__LOOPBACK_TRUSTED", "yes"),
            ("KIROCREW_MEMORY__EXTRA_PREFIXES", "team, org"),
            ("KIROCREW_LOG_FORMAT", "json"),
            ("KIROCREW_HOME", "/ignored"),
            ("KIROCREW_SKIP_MODEL_DOWNLOAD", "1"),
        ]),
    )
    .unwrap();
    assert!(loaded.settings.auth.loopback_trusted);
    assert_eq!(loaded.settings.memory.extra_prefixes, vec!["team", "org"]);
    assert_eq!(loaded.settings.log.format, "json");
    assert!(matches!(
        merge(Map::new(), env(&[("KIROCREW_SERVER__PROT", "1")])),
        Err(ConfigError::Env { .. })
    ));
    assert!(matches!(
        merge(Map::new(), env(&[("KIROCREW_SERVER__PORT", "abc")])),
        Err(ConfigError::Env { .. })
    ));
}

#[test]
fn ranges_are_checked() {
    for bad in [
        serde_json::json!({"server": {"bind": "localhost"}}),
        serde_json::json!({"log": {"format": "xml"}}),
        serde_json::json!({"memory": {"confidence_threshold": 1.5}}),
        serde_json::json!({"memory": {"extra_prefixes": ["Bad"]}}),
        serde_json::json!({"server": {"port": 70000}}),
        serde_json::json!({"server": {"body_timeout_secs": 0}}),
        serde_json::json!({"server": {"body_timeout_secs": 3601}}),
        serde_json::json!({"channels": {"observe_max_messages": 0}}),
        serde_json::json!({"channels": {"observe_max_messages": 10001}}),
        serde_json::json!({"channels": {"observe_ttl_hours": 0}}),
        serde_json::json!({"channels": {"observe_ttl_hours": 8761}}),
    ] {
        let Value::Object(map) = bad.clone() else {
            unreachable!()
        };
        assert!(merge(map, Vec::new()).is_err(), "{bad}");
    }
}

#[test]
fn set_value_validates_and_writes_atomically() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.json");
    std::fs::write(&path, r#"{"slack": {"token_file": "x"}}"#).unwrap();
    assert_eq!(
        set_value(home.path(), "memory.history_idle_hours", "2").unwrap(),
        serde_json::json!(2)
    );
    let before = std::fs::read_to_string(&path).unwrap();
    assert!(before.contains("slack"), "unknown sections are preserved");
    assert!(matches!(
        set_value(home.path(), "memory.nope", "1"),
        Err(ConfigError::UnknownKey(_))
    ));
    assert!(matches!(
        set_value(home.path(), "memory.history_idle_hours", "soon"),
        Err(ConfigError::WrongType { .. })
    ));
    assert!(set_value(home.path(), "memory.history_idle_hours", "-1").is_err());
    assert!(set_value(home.path(), "server", "1").is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
    let loaded = load(home.path(), Vec::new()).unwrap();
    assert_eq!(loaded.settings.memory.history_idle_hours, 2.0);
}

#[test]
fn malformed_config_file_is_a_clear_error() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.json"), "{not json").unwrap();
    assert!(matches!(
        load(home.path(), Vec::new()),
        Err(ConfigError::Parse { .. })
    ));
    assert!(set_value(home.path(), "server.port", "1").is_err());
    assert_eq!(
        std::fs::read_to_string(home.path().join("config.json")).unwrap(),
        "{not json"
    );
}

#[test]
fn secrets_are_redacted_for_printing() {
    let doc = serde_json::json!({"consolidation": {"llm_api_key": "sk-secret", "llm_model": "m"}, "x": {"token": ""}});
    let shown = super::redacted(&doc);
    assert_eq!(shown["consolidation"]["llm_api_key"], "[redacted]");
    assert_eq!(shown["consolidation"]["llm_model"], "m");
    assert_eq!(shown["x"]["token"], "", "empty values are not secrets");
}

#[test]
fn a_bad_hook_sandbox_mode_is_a_clear_error() {
    let Value::Object(map) = serde_json::json!({"hooks": {"sandbox": "strict"}}) else {
        unreachable!()
    };
    let err = merge(map, Vec::new()).unwrap_err().to_string();
    assert!(err.contains("hooks.sandbox"), "{err}");
    assert!(
        err.contains("required") && err.contains("best_effort"),
        "{err}"
    );
    for mode in ["required", "best_effort", "off"] {
        let Value::Object(map) = serde_json::json!({"hooks": {"sandbox": mode}}) else {
            unreachable!()
        };
        assert!(merge(map, Vec::new()).is_ok(), "{mode}");
    }
    let loaded = merge(Map::new(), env(&[("KIROCREW_HOOKS__SANDBOX", "off")]));
    assert!(
        loaded.is_ok_and(|c| c.settings.hooks.sandbox == kirocrew_actors::hooks::SandboxMode::Off)
    );
}

#[test]
fn episodic_methods_switch_retrieval_v2_parts_off_and_refuse_unknown_names() {
    let home = tempfile::tempdir().unwrap();
    let loaded = load(home.path(), Vec::new()).unwrap();
    assert_eq!(
        loaded.settings.store_settings().episodic_methods,
        kirocrew_actors::vector_store::episodic::Methods::default()
    );
    set_value(
        home.path(),
        "memory.episodic_methods",
        r#"["sessions", "graph", "neighbours"]"#,
    )
    .unwrap();
    let methods = load(home.path(), Vec::new())
        .unwrap()
        .settings
        .store_settings()
        .episodic_methods;
    assert!(!methods.speakers && methods.sessions && methods.graph && methods.neighbours);
    let before = std::fs::read_to_string(home.path().join("config.json")).unwrap();
    let err = set_value(home.path(), "memory.episodic_methods", r#"["psychic"]"#).unwrap_err();
    assert!(
        matches!(&err, ConfigError::InvalidValue { key, reason } if key == "memory.episodic_methods" && reason.contains("psychic")),
        "{err:?}"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("config.json")).unwrap(),
        before,
        "a refused value changes nothing"
    );
}
