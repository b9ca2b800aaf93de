use super::*;

/// Go's `%+v` of the strategy, which upstream puts in the partition/selector error.
pub(super) fn go_strategy(strategy: &SidecarSetUpdateStrategy) -> String {
    let int_or_string = |value: Option<&IntOrString>| match value {
        None => "<nil>".to_string(),
        Some(IntOrString::Int(n)) => n.to_string(),
        Some(IntOrString::String(s)) => s.clone(),
    };
    format!(
        "&{{Type:{} Paused:{} Selector:{} Partition:{} MaxUnavailable:{}}}",
        strategy.type_.as_deref().unwrap_or(""),
        strategy.paused.unwrap_or(false),
        strategy
            .selector
            .as_ref()
            .map_or_else(|| "nil".to_string(), go_label_selector),
        int_or_string(strategy.partition.as_ref()),
        int_or_string(strategy.max_unavailable.as_ref()),
    )
}

/// C.4: the rollout knobs, checked only for `RollingUpdate`.
pub(super) fn validate_rolling_update(
    strategy: &SidecarSetUpdateStrategy,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let partition_set = match &strategy.partition {
        None => false,
        Some(IntOrString::String(_)) => true,
        Some(IntOrString::Int(n)) => *n != 0,
    };
    if partition_set && strategy.selector.is_some() {
        // Upstream's path here is a bare `updateStrategy`.
        errors.push(FieldError::invalid(
            &Path::new("updateStrategy"),
            go_strategy(strategy),
            "Partition and Selector cannot be used together",
        ));
    }
    if let Some(selector) = &strategy.selector {
        errors.extend(validate_selector(selector, &path.child("selector")));
    }
    if let Some(partition) = &strategy.partition {
        errors.extend(validate_positive_int_or_percent(
            partition,
            &path.child("partition"),
        ));
    }
    if let Some(max_unavailable) = &strategy.max_unavailable {
        errors.extend(validate_positive_int_or_percent(
            max_unavailable,
            &path.child("maxUnavailable"),
        ));
    }
    errors.extend(rollout_order_errors(
        strategy.priority_strategy.as_ref(),
        strategy.scatter_strategy.as_deref(),
        path,
    ));
    errors
}
