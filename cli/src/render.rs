//! A message's bytes as the tool prints them: as fields where the channel's creator recorded
//! its type's field table (names, type labels, offsets, sizes), as hex otherwise.
//!
//! What the record lets the tool print: every field whose label is a primitive (`u8` …
//! `u128`, `i8` … `i128`, `usize`, `isize`, `f32`, `f64`, `bool`, `char`) or an array of
//! them (`[u64;6]`, nested), read little- or big-endian as this machine is (the channel's
//! processes share it). A field of any other label (a nested struct, a type the derive
//! names by path) is printed as hex, as is a whole raw message.

use serde_json::{Map, Value};

use salias::message::Field;
use salias::status::RecordedType;

/// How to print one channel's messages.
pub(crate) struct Render {
    fields: Option<Vec<Field>>,
}

impl Render {
    /// For a channel whose recorded type is `recorded` (`None`: raw).
    pub(crate) fn new(recorded: Option<&RecordedType>) -> Render {
        Render {
            fields: recorded.and_then(|recorded| recorded.fields.clone()),
        }
    }

    /// `bytes` as `name=value` pairs, or as hex.
    pub(crate) fn text(&self, bytes: &[u8]) -> String {
        match self.fields(bytes) {
            Some(fields) => fields
                .iter()
                .map(|(name, value)| format!("{name}={}", text_of(value)))
                .collect::<Vec<_>>()
                .join(" "),
            None => hex(bytes),
        }
    }

    /// `bytes` as a JSON object of fields, or `None` (print them as hex).
    pub(crate) fn json(&self, bytes: &[u8]) -> Option<Value> {
        let fields = self.fields(bytes)?;
        Some(Value::Object(fields.into_iter().collect::<Map<String, Value>>()))
    }

    fn fields(&self, bytes: &[u8]) -> Option<Vec<(String, Value)>> {
        let fields = self.fields.as_ref()?;
        fields
            .iter()
            .map(|field| {
                let end = field.offset.checked_add(field.size)?;
                let raw = bytes.get(field.offset..end)?;
                Some((field.name.clone(), value(&field.ty, raw)))
            })
            .collect()
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The bytes as lower-case hex, two digits a byte.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut text = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(text, "{byte:02x}");
    }
    text
}

/// A field of type `label` held in `raw`: its value, or its bytes as a hex string when the
/// label is not one the tool reads (or does not fit the field's size).
fn value(label: &str, raw: &[u8]) -> Value {
    known(label, raw).unwrap_or_else(|| Value::String(format!("0x{}", hex(raw))))
}

fn known(label: &str, raw: &[u8]) -> Option<Value> {
    if let Some(inner) = label.strip_prefix('[').and_then(|rest| rest.strip_suffix(']')) {
        let (element, count) = inner.rsplit_once(';')?;
        let count: usize = count.trim().parse().ok()?;
        if count == 0 || !raw.len().is_multiple_of(count) {
            return None;
        }
        let width = raw.len() / count;
        return raw
            .chunks_exact(width)
            .map(|item| known(element, item))
            .collect::<Option<Vec<_>>>()
            .map(Value::Array);
    }
    macro_rules! int {
        ($t:ty) => {{
            let value = <$t>::from_ne_bytes(raw.try_into().ok()?);
            // JSON numbers are exact only up to 2^53 in most readers; wider integers that
            // do not fit i64/u64 print as decimal strings.
            return Some(serde_json::to_value(value).unwrap_or_else(|_| Value::String(value.to_string())));
        }};
    }
    match label {
        "u8" => int!(u8),
        "u16" => int!(u16),
        "u32" => int!(u32),
        "u64" => int!(u64),
        "usize" => int!(usize),
        "i8" => int!(i8),
        "i16" => int!(i16),
        "i32" => int!(i32),
        "i64" => int!(i64),
        "isize" => int!(isize),
        "u128" => Some(Value::String(u128::from_ne_bytes(raw.try_into().ok()?).to_string())),
        "i128" => Some(Value::String(i128::from_ne_bytes(raw.try_into().ok()?).to_string())),
        "f32" => Some(float(f64::from(f32::from_ne_bytes(raw.try_into().ok()?)))),
        "f64" => Some(float(f64::from_ne_bytes(raw.try_into().ok()?))),
        "bool" => match raw {
            [0] => Some(Value::Bool(false)),
            [1] => Some(Value::Bool(true)),
            _ => None,
        },
        "char" => char::from_u32(u32::from_ne_bytes(raw.try_into().ok()?)).map(|c| Value::String(c.to_string())),
        _ => None,
    }
}

/// A float as JSON: NaN and the infinities, which JSON lacks, as strings.
fn float(value: f64) -> Value {
    serde_json::Number::from_f64(value).map_or_else(|| Value::String(value.to_string()), Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(fields: &[(&str, &str, usize, usize)]) -> Render {
        Render {
            fields: Some(
                fields
                    .iter()
                    .map(|&(name, ty, offset, size)| Field::new(name, ty, offset, size))
                    .collect(),
            ),
        }
    }

    #[test]
    fn primitives_and_arrays_print_as_values() {
        let render = render(&[
            ("seq", "u64", 0, 8),
            ("price", "f64", 8, 8),
            ("side", "i8", 16, 1),
            ("live", "bool", 17, 1),
            ("_pad", "[u8;2]", 18, 2),
            ("qty", "[u16;2]", 20, 4),
        ]);
        let mut bytes = Vec::new();
        bytes.extend(7u64.to_ne_bytes());
        bytes.extend(1.5f64.to_ne_bytes());
        bytes.extend([(-2i8) as u8, 1, 0, 0]);
        bytes.extend(3u16.to_ne_bytes());
        bytes.extend(4u16.to_ne_bytes());
        assert_eq!(
            render.text(&bytes),
            "seq=7 price=1.5 side=-2 live=true _pad=[0,0] qty=[3,4]"
        );
        let json = render.json(&bytes).unwrap();
        assert_eq!(json["price"], 1.5);
        assert_eq!(json["qty"], serde_json::json!([3, 4]));
    }

    #[test]
    fn what_the_tool_cannot_read_prints_as_hex() {
        let render = render(&[
            ("inner", "Inner", 0, 2),
            ("flag", "bool", 2, 1),
            ("wide", "u128", 3, 16),
        ]);
        let mut bytes = vec![0xab, 0xcd, 7];
        bytes.extend(u128::MAX.to_ne_bytes());
        let json = render.json(&bytes).unwrap();
        assert_eq!(json["inner"], "0xabcd");
        // A bool that is neither 0 nor 1 is shown as the byte it is, not guessed.
        assert_eq!(json["flag"], "0x07");
        assert_eq!(json["wide"], u128::MAX.to_string());
        assert_eq!(Render::new(None).text(&[1, 0xff]), "01ff");
        // A message shorter than its fields say (a recorded table that lies) is hex.
        assert!(render.json(&bytes[..4]).is_none());
    }
}
