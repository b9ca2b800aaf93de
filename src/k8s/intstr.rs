//! Int-or-percent values scaled against a total, as OpenKruise and apimachinery do it, with
//! Go's parse errors word for word.

use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use super::go_text::go_quote;

/// OpenKruise's scaler (CloneSet, SidecarSet partition): ints as they are; strings must end in
/// `%` and their number may be fractional (`12.5%`); unset is 0.
pub fn kruise_scaled_value(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i64, String> {
    let text = match value {
        None => return Ok(0),
        Some(IntOrString::Int(n)) => return Ok(i64::from(*n)),
        Some(IntOrString::String(text)) => text,
    };
    let Some(number) = text.strip_suffix('%') else {
        return Err("invalid type: string is not a percentage".to_string());
    };
    let percent = parse_go_float(number)
        .map_err(|cause| format!("invalid value {}: {cause}", go_quote(text)))?;
    Ok(scale_percent(percent, total, round_up))
}

/// Go's `strconv.ParseFloat(s, 64)` for the inputs Kubernetes users write, with its messages.
/// Unlike Go, `inf` and `NaN` are refused: Go accepts them and OpenKruise then scales them into
/// an arbitrary integer.
fn parse_go_float(number: &str) -> Result<f64, String> {
    let spelled_non_finite = {
        let lower = number.to_ascii_lowercase();
        lower.contains("inf") || lower.contains("nan")
    };
    match number.parse::<f64>() {
        Ok(value) if value.is_finite() => Ok(value),
        // A finite literal too large for a float.
        Ok(_) if !spelled_non_finite => Err(format!(
            "strconv.ParseFloat: parsing {}: value out of range",
            go_quote(number)
        )),
        _ => Err(format!(
            "strconv.ParseFloat: parsing {}: invalid syntax",
            go_quote(number)
        )),
    }
}

/// `percent` of `total`, rounded; saturates instead of overflowing.
fn scale_percent(percent: f64, total: i32, round_up: bool) -> i64 {
    let exact = percent * f64::from(total) / 100.0;
    let rounded = if round_up {
        exact.ceil()
    } else {
        exact.floor()
    };
    // `as` saturates for out-of-range floats, which is the safe reading of absurd percentages.
    rounded as i64
}

/// Go's `strconv.Atoi` with its messages (64-bit `int`).
fn go_atoi(text: &str) -> Result<i64, String> {
    text.parse::<i64>().map_err(|error| {
        let reason = match error.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.Atoi: parsing {}: {reason}", go_quote(text))
    })
}

/// `strconv.Atoi` with the error ignored, as Go code does with `v, _ := strconv.Atoi(s)`:
/// out-of-range values clamp, anything else reads as 0.
fn go_atoi_lenient(text: &str) -> i64 {
    match text.parse::<i64>() {
        Ok(value) => value,
        Err(error) => match error.kind() {
            std::num::IntErrorKind::PosOverflow => i64::MAX,
            std::num::IntErrorKind::NegOverflow => i64::MIN,
            _ => 0,
        },
    }
}

/// apimachinery's `GetScaledValueFromIntOrPercent` (the Advanced DaemonSet's scaler): ints as they
/// are; strings must end in one `%` before an integer (`"12.5%"` and `"5"` are errors), scaled
/// against `total` and rounded up or down. Unset is an error, as in Go; callers that default it
/// say so.
pub fn scaled_value(
    value: Option<&IntOrString>,
    total: i32,
    round_up: bool,
) -> Result<i64, String> {
    let text = match value {
        None => return Err("nil value for IntOrString".to_string()),
        Some(IntOrString::Int(n)) => return Ok(i64::from(*n)),
        Some(IntOrString::String(text)) => text,
    };
    let Some(number) = text.strip_suffix('%') else {
        return Err(
            "invalid value for IntOrString: invalid type: string is not a percentage".to_string(),
        );
    };
    let percent = go_atoi(number).map_err(|cause| {
        format!(
            "invalid value for IntOrString: invalid value {}: {cause}",
            go_quote(text)
        )
    })?;
    Ok(scale_percent(percent as f64, total, round_up))
}

/// apimachinery's deprecated `GetValueFromIntOrPercent`: every string is a percentage, its `%`
/// signs removed (so `"5"` means 5%).
pub fn legacy_scaled_value(value: &IntOrString, total: i32, round_up: bool) -> Result<i64, String> {
    match value {
        IntOrString::Int(n) => Ok(i64::from(*n)),
        IntOrString::String(text) => {
            let digits = text.replace('%', "");
            let percent = go_atoi(&digits).map_err(|cause| {
                format!(
                    "invalid value for IntOrString: invalid value {}: {cause}",
                    go_quote(text)
                )
            })?;
            Ok(scale_percent(percent as f64, total, round_up))
        }
    }
}

/// The number an int-or-percent stands for, as OpenKruise's DaemonSet validator reads it: the
/// percentage of a valid `N%`, else the int (a non-numeric string reads as 0).
pub fn int_or_percent_number(value: &IntOrString) -> i64 {
    match value {
        IntOrString::Int(n) => i64::from(*n),
        IntOrString::String(text) => match valid_percent(text) {
            Some(percent) => percent,
            None => go_atoi_lenient(text),
        },
    }
}

/// The number of a string matching `^[0-9]+%$`.
pub fn valid_percent(text: &str) -> Option<i64> {
    let digits = text.strip_suffix('%')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some(go_atoi_lenient(digits))
}

/// An int-or-string's range form `start-end` → (start, end), start ≤ end (the Advanced
/// StatefulSet's `reserveOrdinals`), with OpenKruise's messages.
pub fn parse_range(range: &str) -> Result<(i64, i64), String> {
    let (start, end) = range
        .split_once('-')
        .ok_or_else(|| format!("invalid range {}: want start-end", go_quote(range)))?;
    let number = |part: &str| {
        part.parse::<i64>().map_err(|_| {
            format!(
                "invalid range {}: {} is not a number",
                go_quote(range),
                go_quote(part)
            )
        })
    };
    let (start, end) = (number(start)?, number(end)?);
    if start > end {
        return Err(format!(
            "invalid range {}: start {start} is greater than end {end}",
            go_quote(range)
        ));
    }
    Ok((start, end))
}

#[cfg(test)]
mod tests;
