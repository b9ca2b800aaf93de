use super::*;

#[test]
fn encoding_contains_every_family() {
    let metrics = Metrics::new();
    // Labelled families appear once they have a sample; the plain metrics are there from start.
    let text = metrics.encode();
    assert!(!text.contains("admission_requests"), "{text}");
    assert!(
        text.contains("\nkruise_webhook_sidecarsets_loaded 0\n"),
        "{text}"
    );

    metrics.observe_admission(
        "mutate-pod",
        "CREATE",
        AdmissionResult::Allowed,
        Duration::from_micros(50),
    );
    let text = metrics.encode();
    for family in [
        "# TYPE kruise_webhook_admission_requests counter",
        "# TYPE kruise_webhook_admission_duration_seconds histogram",
        "# UNIT kruise_webhook_admission_duration_seconds seconds",
        "# TYPE kruise_webhook_tls_certificate_not_after_seconds gauge",
        "# TYPE kruise_webhook_tls_certificate_reloads counter",
        "# TYPE kruise_webhook_tls_certificate_reload_failures counter",
        "# TYPE kruise_webhook_tls_ca_bundle_mismatches gauge",
        "# TYPE kruise_webhook_sidecarsets_loaded gauge",
        "# TYPE kruise_webhook_sidecarset_load_errors counter",
        "# TYPE kruise_webhook_sidecarset_files_stale gauge",
        "# TYPE kruise_webhook_namespaces_known gauge",
    ] {
        assert!(text.contains(family), "missing {family:?} in:\n{text}");
    }
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn admission_observations_are_labelled_and_bucketed() {
    let metrics = Metrics::new();
    metrics.observe_admission(
        "mutate-pod",
        "CREATE",
        AdmissionResult::Patched,
        Duration::from_micros(300),
    );
    metrics.observe_admission(
        "mutate-pod",
        "CREATE",
        AdmissionResult::Patched,
        Duration::from_micros(80),
    );
    metrics.observe_admission(
        "mutate-pod",
        "bogus",
        AdmissionResult::Error,
        Duration::from_millis(2),
    );
    let text = metrics.encode();

    assert!(text.contains(
        r#"admission_requests_total{webhook="mutate-pod",operation="CREATE",result="patched"} 2"#
    ));
    assert!(text.contains(
        r#"admission_requests_total{webhook="mutate-pod",operation="other",result="error"} 1"#
    ));
    assert!(
        text.contains(r#"kruise_webhook_admission_duration_seconds_count{webhook="mutate-pod"} 3"#)
    );
    // 80 µs lands in the first bucket; 300 µs in the 0.0005 bucket (cumulative: 2).
    assert!(
        text.contains(r#"admission_duration_seconds_bucket{le="0.0001",webhook="mutate-pod"} 1"#)
    );
    assert!(
        text.contains(r#"admission_duration_seconds_bucket{le="0.0005",webhook="mutate-pod"} 2"#)
    );
}

#[test]
fn setters_show_up_in_the_encoding() {
    let metrics = Metrics::new();
    metrics.set_certificate_not_after(UNIX_EPOCH + Duration::from_secs(1_800_000_000));
    metrics.record_certificate_reload::<()>(Ok(UNIX_EPOCH + Duration::from_secs(1_900_000_000)));
    metrics.record_certificate_reload(Err("mismatched pair"));
    metrics.record_certificate_reload(Err("unreadable"));
    metrics.set_sidecarsets_loaded(7);
    metrics.record_sidecarset_load_error();
    metrics.add_sidecarset_load_errors(2);
    metrics.set_sidecarsets_not_served(&["invalid", "revision"], |r| usize::from(r == "revision"));
    metrics.record_undecodable_object("SidecarSet");
    metrics.record_undecodable_object("SidecarSet");
    metrics.record_undecodable_object("CloneSet");
    let text = metrics.encode();

    // A successful reload publishes the new expiry; failures leave it alone.
    assert!(text.contains("\nkruise_webhook_tls_certificate_not_after_seconds 1900000000\n"));
    assert!(text.contains("\nkruise_webhook_tls_certificate_reloads_total 1\n"));
    assert!(text.contains("\nkruise_webhook_tls_certificate_reload_failures_total 2\n"));
    assert!(text.contains("\nkruise_webhook_sidecarsets_loaded 7\n"));
    assert!(text.contains("\nkruise_webhook_sidecarset_load_errors_total 3\n"));
    assert!(text.contains("\nkruise_webhook_sidecarsets_not_served{reason=\"revision\"} 1\n"));
    assert!(text.contains("\nkruise_webhook_sidecarsets_not_served{reason=\"invalid\"} 0\n"));
    assert!(text.contains("# TYPE kruise_webhook_controller_objects_undecodable counter"));
    assert!(
        text.contains(
            r#"kruise_webhook_controller_objects_undecodable_total{kind="SidecarSet"} 2"#
        )
    );
    assert!(
        text.contains(r#"kruise_webhook_controller_objects_undecodable_total{kind="CloneSet"} 1"#)
    );
}

#[test]
fn pods_missing_sidecars_are_counted_per_sidecarset_until_it_is_gone() {
    let metrics = Metrics::new();
    metrics.set_pods_missing_sidecars("mesh", 2);
    metrics.set_pods_missing_sidecars("log", 0);
    let text = metrics.encode();
    assert!(text.contains("# TYPE kruise_webhook_sidecarset_pods_missing_sidecars gauge"));
    assert!(
        text.contains("\nkruise_webhook_sidecarset_pods_missing_sidecars{sidecarset=\"mesh\"} 2\n")
    );
    assert!(
        text.contains("\nkruise_webhook_sidecarset_pods_missing_sidecars{sidecarset=\"log\"} 0\n")
    );
    metrics.forget_pods_missing_sidecars("mesh");
    let text = metrics.encode();
    assert!(!text.contains("sidecarset=\"mesh\""), "{text}");
    assert!(text.contains("sidecarset=\"log\""), "{text}");
}
