//! A pod's required node affinity as the scheduler's helpers read it
//! (`component-helpers/scheduling/corev1/nodeaffinity.GetRequiredNodeAffinity`): every
//! `nodeSelector` pair must be a node label, and then, with
//! `requiredDuringSchedulingIgnoredDuringExecution`, one of its terms must match. A term is the
//! AND of its label expressions and its field expressions; an empty term, or one that does not
//! parse, matches nothing.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm, PodSpec};

use super::node::NodeSummary;
use crate::k8s::names::{is_label_value, is_qualified_name};

/// The field a `matchFields` requirement can name (any other reads as "").
pub const NODE_NAME_FIELD: &str = "metadata.name";

/// Parsed once per DaemonSet and round, matched against every node.
#[derive(Debug, Clone, PartialEq)]
pub struct RequiredNodeAffinity {
    /// `nodeSelector`, when it has entries.
    node_selector: Option<BTreeMap<String, String>>,
    /// The required terms, when the pod has them (empty and unparsable terms dropped).
    terms: Option<Vec<Term>>,
}

#[derive(Debug, Clone, PartialEq)]
struct Term {
    /// `matchExpressions`, when there are some.
    labels: Option<Vec<LabelRequirement>>,
    /// `matchFields`, when there are some.
    fields: Option<Vec<FieldRequirement>>,
}

#[derive(Debug, Clone, PartialEq)]
enum LabelRequirement {
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    Gt(String, i64),
    Lt(String, i64),
}

#[derive(Debug, Clone, PartialEq)]
struct FieldRequirement {
    field: String,
    value: String,
    equal: bool,
}

impl RequiredNodeAffinity {
    pub fn of(spec: &PodSpec) -> RequiredNodeAffinity {
        let node_selector = spec
            .node_selector
            .as_ref()
            .filter(|selector| !selector.is_empty())
            .cloned();
        let terms = spec
            .affinity
            .as_ref()
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .map(|required| {
                required
                    .node_selector_terms
                    .iter()
                    .filter_map(Term::parse)
                    .collect()
            });
        RequiredNodeAffinity {
            node_selector,
            terms,
        }
    }

    pub fn matches(&self, node: &NodeSummary) -> bool {
        if let Some(selector) = &self.node_selector
            && !selector
                .iter()
                .all(|(key, value)| node.labels.get(key) == Some(value))
        {
            return false;
        }
        match &self.terms {
            Some(terms) => terms.iter().any(|term| term.matches(node)),
            None => true,
        }
    }
}

impl Term {
    /// `None` for a term that matches nothing: empty, or with an expression that does not parse.
    fn parse(term: &NodeSelectorTerm) -> Option<Term> {
        let expressions = term.match_expressions.as_deref().unwrap_or(&[]);
        let fields = term.match_fields.as_deref().unwrap_or(&[]);
        if expressions.is_empty() && fields.is_empty() {
            return None;
        }
        let labels = if expressions.is_empty() {
            None
        } else {
            Some(
                expressions
                    .iter()
                    .map(LabelRequirement::parse)
                    .collect::<Option<Vec<_>>>()?,
            )
        };
        let fields = if fields.is_empty() {
            None
        } else {
            Some(
                fields
                    .iter()
                    .map(FieldRequirement::parse)
                    .collect::<Option<Vec<_>>>()?,
            )
        };
        Some(Term { labels, fields })
    }

    fn matches(&self, node: &NodeSummary) -> bool {
        if let Some(labels) = &self.labels
            && !labels.iter().all(|r| r.matches(node))
        {
            return false;
        }
        // A node without a name has no fields, and field requirements are then not applied.
        if let Some(fields) = &self.fields
            && !node.name.is_empty()
            && !fields.iter().all(|r| r.matches(node))
        {
            return false;
        }
        true
    }
}

impl LabelRequirement {
    /// apimachinery's `labels.NewRequirement` checks: a qualified key, label-syntax values, and
    /// the number of values each operator takes.
    fn parse(requirement: &NodeSelectorRequirement) -> Option<LabelRequirement> {
        let key = requirement.key.clone();
        let values = requirement.values.clone().unwrap_or_default();
        if !is_qualified_name(&key) || values.iter().any(|v| !is_label_value(v)) {
            return None;
        }
        let single_number = || match values.as_slice() {
            [value] => value.parse::<i64>().ok(),
            _ => None,
        };
        Some(match requirement.operator.as_str() {
            "In" if !values.is_empty() => LabelRequirement::In(key, values),
            "NotIn" if !values.is_empty() => LabelRequirement::NotIn(key, values),
            "Exists" if values.is_empty() => LabelRequirement::Exists(key),
            "DoesNotExist" if values.is_empty() => LabelRequirement::DoesNotExist(key),
            "Gt" => LabelRequirement::Gt(key, single_number()?),
            "Lt" => LabelRequirement::Lt(key, single_number()?),
            _ => return None,
        })
    }

    fn matches(&self, node: &NodeSummary) -> bool {
        let label = |key: &str| node.labels.get(key).map(String::as_str);
        let number = |key: &str| label(key).and_then(|v| v.parse::<i64>().ok());
        match self {
            LabelRequirement::In(key, values) => {
                label(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            LabelRequirement::NotIn(key, values) => {
                !label(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            LabelRequirement::Exists(key) => label(key).is_some(),
            LabelRequirement::DoesNotExist(key) => label(key).is_none(),
            LabelRequirement::Gt(key, bound) => number(key).is_some_and(|v| v > *bound),
            LabelRequirement::Lt(key, bound) => number(key).is_some_and(|v| v < *bound),
        }
    }
}

impl FieldRequirement {
    /// `In` and `NotIn` with exactly one value; no other operator applies to fields.
    fn parse(requirement: &NodeSelectorRequirement) -> Option<FieldRequirement> {
        let [value] = requirement.values.as_deref().unwrap_or(&[]) else {
            return None;
        };
        let equal = match requirement.operator.as_str() {
            "In" => true,
            "NotIn" => false,
            _ => return None,
        };
        Some(FieldRequirement {
            field: requirement.key.clone(),
            value: value.clone(),
            equal,
        })
    }

    fn matches(&self, node: &NodeSummary) -> bool {
        let actual = if self.field == NODE_NAME_FIELD {
            node.name()
        } else {
            ""
        };
        (actual == self.value) == self.equal
    }
}

#[cfg(test)]
mod tests;
