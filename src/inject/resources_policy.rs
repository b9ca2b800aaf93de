//! A sidecar's `resourcesPolicy` (OpenKruise v1.9.0): its resources computed at pod creation from
//! the pod's own containers.
//!
//! Targets are the pod's containers and native-sidecar init containers whose name the policy's
//! regex finds (unanchored), minus any container named like one of a matched SidecarSet's; none
//! refuses the pod. Their cpu and memory are aggregated by `sum` or `max`: a limit only when every
//! target has one (one unlimited target makes the whole unlimited), a request counting 0 where
//! missing. Each expression of `resourcesExpr` is then evaluated with the aggregate bound to its
//! variable, and the sidecar's `resources` become exactly the computed entries.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::{Container, Pod, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as WireQuantity;

use crate::api::{ResourceExprPair, ResourcesPolicy};
use crate::k8s::go_text::go_quote;
use crate::k8s::quantity::calculator::{self, Value, go_int64};
use crate::k8s::quantity::{Format, Quantity};

const CPU: &str = "cpu";
const MEMORY: &str = "memory";

/// Why a sidecar's resources cannot be computed; upstream's words.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ResourcesPolicyError(pub String);

/// The resources `policy` gives its sidecar in `pod`. `sidecar_names` are the container names of
/// every SidecarSet matched for the pod: never targets.
pub fn sidecar_resources(
    policy: &ResourcesPolicy,
    pod: &Pod,
    sidecar_names: &HashSet<&str>,
) -> Result<ResourceRequirements, ResourcesPolicyError> {
    let pattern = policy.target_containers_name_regex.as_deref().unwrap_or("");
    let targets = target_containers(pod, pattern, sidecar_names)?;
    if targets.is_empty() {
        return Err(ResourcesPolicyError(format!(
            "no containers match the regex pattern {}",
            go_quote(pattern)
        )));
    }
    let aggregate = Aggregate::of(&targets, &policy.target_containers_mode)?;
    let expressions = policy.resources_expr.as_ref();
    let mut limits = BTreeMap::new();
    if let Some(pair) = expressions.and_then(|e| e.limits.as_ref()) {
        for (resource, expr) in expressions_of(pair) {
            // An unlimited aggregate leaves the limit unset.
            if let Some(total) = aggregate.limits.get(resource) {
                let value = evaluate(expr, total).map_err(|e| failed(resource, "limits", e))?;
                limits.insert(resource.to_string(), WireQuantity(value.canonical()));
            }
        }
    }
    let mut requests = BTreeMap::new();
    if let Some(pair) = expressions.and_then(|e| e.requests.as_ref()) {
        for (resource, expr) in expressions_of(pair) {
            let total = aggregate.requests.get(resource).unwrap_or(&Quantity::ZERO);
            let value = evaluate(expr, total).map_err(|e| failed(resource, "requests", e))?;
            requests.insert(resource.to_string(), WireQuantity(value.canonical()));
        }
    }
    Ok(ResourceRequirements {
        limits: (!limits.is_empty()).then_some(limits),
        requests: (!requests.is_empty()).then_some(requests),
        ..Default::default()
    })
}

/// The non-empty expressions of a pair, by resource.
fn expressions_of(pair: &ResourceExprPair) -> impl Iterator<Item = (&'static str, &str)> {
    [(CPU, pair.cpu.as_deref()), (MEMORY, pair.memory.as_deref())]
        .into_iter()
        .filter_map(|(resource, expr)| expr.filter(|e| !e.is_empty()).map(|e| (resource, e)))
}

fn failed(resource: &str, kind: &str, error: String) -> ResourcesPolicyError {
    let resource = if resource == CPU { "CPU" } else { MEMORY };
    ResourcesPolicyError(format!(
        "failed to evaluate {resource} {kind} expression: {error}"
    ))
}

/// Native-sidecar init containers, then containers, whose name `pattern` finds.
fn target_containers<'p>(
    pod: &'p Pod,
    pattern: &str,
    sidecar_names: &HashSet<&str>,
) -> Result<Vec<&'p Container>, ResourcesPolicyError> {
    let regex = regex::Regex::new(pattern).map_err(|e| {
        ResourcesPolicyError(format!(
            "failed to get target containers: invalid regex pattern {}: {e}",
            go_quote(pattern)
        ))
    })?;
    let Some(spec) = pod.spec.as_ref() else {
        return Ok(Vec::new());
    };
    let native_sidecars = spec
        .init_containers
        .iter()
        .flatten()
        .filter(|c| c.restart_policy.as_deref() == Some("Always"));
    Ok(native_sidecars
        .chain(&spec.containers)
        .filter(|c| !sidecar_names.contains(c.name.as_str()) && regex.is_match(&c.name))
        .collect())
}

/// The targets' cpu and memory, aggregated; a resource missing from `limits` is unlimited.
#[derive(Debug, Default)]
struct Aggregate {
    limits: BTreeMap<&'static str, Quantity>,
    requests: BTreeMap<&'static str, Quantity>,
}

impl Aggregate {
    fn of(targets: &[&Container], mode: &str) -> Result<Aggregate, ResourcesPolicyError> {
        let mut aggregate = Aggregate::default();
        let sum = match mode {
            "sum" => true,
            "max" => false,
            // The CRD allows only these two; upstream aggregates nothing for anything else.
            _ => return Ok(aggregate),
        };
        for resource in [CPU, MEMORY] {
            let limits = quantities(targets, resource, "limits", |r| r.limits.as_ref())?;
            let requests = quantities(targets, resource, "requests", |r| r.requests.as_ref())?;
            if limits.iter().all(Option::is_some) {
                let limits: Vec<Quantity> = limits.into_iter().flatten().collect();
                if let Some(total) = combine(&limits, sum)? {
                    aggregate.limits.insert(resource, total);
                }
            }
            let requests: Vec<Quantity> = requests.into_iter().flatten().collect();
            // A zero sum is no request (it counts as 0 all the same).
            if let Some(total) = combine(&requests, sum)?.filter(|t| !sum || !t.is_zero()) {
                aggregate.requests.insert(resource, total);
            }
        }
        Ok(aggregate)
    }
}

/// Upstream's sum (from `NewQuantity(0, DecimalSI)`, exact) or max (the first largest, as
/// written); `None` for no quantities, except that a sum is always a quantity.
fn combine(quantities: &[Quantity], sum: bool) -> Result<Option<Quantity>, ResourcesPolicyError> {
    if sum {
        let mut total = Quantity::from_int(0, Format::DecimalSI);
        for quantity in quantities {
            total = total.checked_add(quantity).ok_or_else(|| {
                ResourcesPolicyError("the sum of the target containers' resources overflows".into())
            })?;
        }
        return Ok(Some(total));
    }
    let mut max: Option<&Quantity> = None;
    for quantity in quantities {
        if max.is_none_or(|m| quantity.cmp_value(m).is_gt()) {
            max = Some(quantity);
        }
    }
    Ok(max.cloned())
}

/// Each target's `resources.<kind>[resource]`, parsed as Go decodes it.
fn quantities(
    targets: &[&Container],
    resource: &str,
    kind: &str,
    list: impl Fn(&ResourceRequirements) -> Option<&BTreeMap<String, WireQuantity>>,
) -> Result<Vec<Option<Quantity>>, ResourcesPolicyError> {
    targets
        .iter()
        .map(|container| {
            let text = container
                .resources
                .as_ref()
                .and_then(&list)
                .and_then(|l| l.get(resource));
            text.map(|q| {
                Quantity::parse(q.0.trim()).map_err(|e| {
                    ResourcesPolicyError(format!(
                        "container {}: resources.{kind}.{resource}: {e}",
                        go_quote(&container.name)
                    ))
                })
            })
            .transpose()
        })
        .collect()
}

/// Upstream's `evaluateResourceExpression`: the variable is `memory` when the expression names
/// that word, else `cpu`, bound to the aggregate whichever resource is computed; a plain number
/// is thousandths for `cpu` and a whole number for `memory`.
fn evaluate(expr: &str, aggregate: &Quantity) -> Result<Quantity, String> {
    let variable = if names_word(expr, MEMORY) {
        MEMORY
    } else {
        CPU
    };
    let variables = BTreeMap::from([(variable.to_string(), Value::Quantity(aggregate.clone()))]);
    let value = calculator::evaluate(expr, &variables)
        .map_err(|e| format!("failed to parse expression {}: {e}", go_quote(expr)))?;
    let quantity = match value {
        Value::Quantity(q) => q,
        Value::Number(n) if variable == CPU => calculator::number_quantity(n),
        Value::Number(n) => Quantity::from_int(go_int64(n), Format::DecimalSI),
    };
    // A NaN or infinite number gets past the calculator's sign check; upstream would write
    // Go's integer-indefinite value, a negative quantity.
    if quantity.is_negative() {
        return Err(format!(
            "failed to parse expression {}: calculation result is out of range",
            go_quote(expr)
        ));
    }
    Ok(quantity)
}

/// Go's `\bword\b` (ASCII word boundaries).
fn names_word(text: &str, word: &str) -> bool {
    let is_word = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    let bytes = text.as_bytes();
    text.match_indices(word).any(|(start, _)| {
        let end = start + word.len();
        !is_word(start.checked_sub(1).and_then(|i| bytes.get(i))) && !is_word(bytes.get(end))
    })
}

#[cfg(test)]
mod tests;
