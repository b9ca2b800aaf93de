use super::*;

// ---------------------------------------------------------------------------------------------
// Probes and lifecycle hooks

pub(super) fn validate_hooks_and_probes(
    container: &Container,
    context: PodContext<'_, '_>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(lifecycle) = &container.lifecycle {
        errors.extend(validate_lifecycle(
            lifecycle,
            context.termination_grace_period_seconds,
            &path.child("lifecycle"),
        ));
    }
    for (field, probe, needs_single_success) in [
        ("livenessProbe", &container.liveness_probe, true),
        ("readinessProbe", &container.readiness_probe, false),
        ("startupProbe", &container.startup_probe, true),
    ] {
        let Some(probe) = probe else { continue };
        let probe_path = path.child(field);
        errors.extend(validate_probe(probe, &probe_path));
        let success = probe.success_threshold.unwrap_or(0);
        if needs_single_success && success != 1 {
            errors.push(FieldError::invalid(
                &probe_path.child("successThreshold"),
                success,
                "must be 1",
            ));
        }
        if !needs_single_success && let Some(grace) = probe.termination_grace_period_seconds {
            errors.push(FieldError::invalid(
                &probe_path.child("terminationGracePeriodSeconds"),
                grace,
                "must not be set for readinessProbes",
            ));
        }
    }
    errors
}

pub(super) fn validate_probe(probe: &Probe, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut handlers = 0;
    let mut handler = |name: &str, set: bool, check: &dyn Fn(&Path) -> Vec<FieldError>| {
        if !set {
            return Vec::new();
        }
        if handlers > 0 {
            return vec![FieldError::forbidden(
                &path.child(name),
                MORE_THAN_ONE_HANDLER,
            )];
        }
        handlers += 1;
        check(&path.child(name))
    };
    errors.extend(handler("exec", probe.exec.is_some(), &|p| {
        validate_exec(probe.exec.as_ref().and_then(|e| e.command.as_deref()), p)
    }));
    errors.extend(handler("httpGet", probe.http_get.is_some(), &|p| {
        probe
            .http_get
            .as_ref()
            .map(|h| validate_http_get(h, p))
            .unwrap_or_default()
    }));
    errors.extend(handler("tcpSocket", probe.tcp_socket.is_some(), &|p| {
        probe
            .tcp_socket
            .as_ref()
            .map(|t| validate_port_number_or_name(&t.port, &p.child("port")))
            .unwrap_or_default()
    }));
    errors.extend(handler("grpc", probe.grpc.is_some(), &|p| {
        let port = probe.grpc.as_ref().map(|g| g.port).unwrap_or(0);
        port_number_errors(i64::from(port))
            .into_iter()
            .map(|m| FieldError::invalid(&p.child("port"), port, m))
            .collect()
    }));
    if handlers == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    for (field, value) in [
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("periodSeconds", probe.period_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ] {
        errors.extend(validate_nonnegative(
            i64::from(value.unwrap_or(0)),
            &path.child(field),
        ));
    }
    if let Some(grace) = probe.termination_grace_period_seconds.filter(|g| *g <= 0) {
        errors.push(FieldError::invalid(
            &path.child("terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        ));
    }
    errors
}

pub(super) fn validate_lifecycle(
    lifecycle: &Lifecycle,
    grace_period: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (field, handler) in [
        ("postStart", &lifecycle.post_start),
        ("preStop", &lifecycle.pre_stop),
    ] {
        if let Some(handler) = handler {
            errors.extend(validate_lifecycle_handler(
                handler,
                grace_period,
                &path.child(field),
            ));
        }
    }
    errors
}

pub(super) fn validate_lifecycle_handler(
    handler: &LifecycleHandler,
    grace_period: Option<i64>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut handlers = 0;
    let mut add = |name: &str, checked: Option<Vec<FieldError>>, errors: &mut Vec<FieldError>| {
        let Some(checked) = checked else { return };
        if handlers > 0 {
            errors.push(FieldError::forbidden(
                &path.child(name),
                MORE_THAN_ONE_HANDLER,
            ));
        } else {
            handlers += 1;
            errors.extend(checked);
        }
    };
    let exec = handler
        .exec
        .as_ref()
        .map(|e| validate_exec(e.command.as_deref(), &path.child("exec")));
    add("exec", exec, &mut errors);
    let http = handler
        .http_get
        .as_ref()
        .map(|h| validate_http_get(h, &path.child("httpGet")));
    add("httpGet", http, &mut errors);
    let tcp = handler
        .tcp_socket
        .as_ref()
        .map(|t| validate_port_number_or_name(&t.port, &path.child("tcpSocket").child("port")));
    add("tcpSocket", tcp, &mut errors);
    let sleep = handler.sleep.as_ref().map(|s| {
        let limit = grace_period.unwrap_or(30);
        if s.seconds < 0 || s.seconds > limit {
            vec![FieldError::invalid(
                &path.child("sleep"),
                s.seconds,
                format!(
                    "must be non-negative and less than terminationGracePeriodSeconds ({limit})"
                ),
            )]
        } else {
            Vec::new()
        }
    });
    add("sleep", sleep, &mut errors);
    if handlers == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    errors
}

pub(super) fn validate_exec(command: Option<&[String]>, path: &Path) -> Vec<FieldError> {
    if command.is_none_or(|c| c.is_empty()) {
        vec![FieldError::required(&path.child("command"), "")]
    } else {
        Vec::new()
    }
}

pub(super) fn validate_http_get(action: &HTTPGetAction, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if action.path.as_deref().unwrap_or("").is_empty() {
        errors.push(FieldError::required(&path.child("path"), ""));
    }
    errors.extend(validate_port_number_or_name(
        &action.port,
        &path.child("port"),
    ));
    let scheme = action.scheme.as_deref().unwrap_or("");
    if !matches!(scheme, "HTTP" | "HTTPS") {
        errors.push(FieldError::not_supported(
            &path.child("scheme"),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    for header in action.http_headers.iter().flatten() {
        let valid = !header.name.is_empty()
            && header
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-');
        if !valid {
            errors.push(FieldError::invalid(
                &path.child("httpHeaders"),
                header.name.as_str(),
                "a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
            ));
        }
    }
    errors
}

/// `ValidatePortNumOrName`
pub fn validate_port_number_or_name(port: &IntOrString, path: &Path) -> Vec<FieldError> {
    match port {
        IntOrString::Int(n) => port_number_errors(i64::from(*n))
            .into_iter()
            .map(|m| FieldError::invalid(path, *n, m))
            .collect(),
        IntOrString::String(name) => port_name_errors(name)
            .into_iter()
            .map(|m| FieldError::invalid(path, name.as_str(), m))
            .collect(),
    }
}
