//! A JSON value read with every object's keys unique, at any depth.
//!
//! `serde_json::Value` keeps the last of two equal keys without a word, so `{"paused": true,
//! "paused": false}` would mean whatever this parser picks while another one (an agent's, a
//! proxy's) picks the other. A body that says two things is refused instead.

use std::fmt;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// A [`Value`] whose objects, nested ones included, have no key twice.
pub(super) struct UniqueKeys(pub Value);

impl<'de> Deserialize<'de> for UniqueKeys {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<UniqueKeys, D::Error> {
        deserializer
            .deserialize_any(UniqueKeysVisitor)
            .map(UniqueKeys)
    }
}

struct UniqueKeysVisitor;

impl<'de> Visitor<'de> for UniqueKeysVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E>(self, value: i64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_u64<E>(self, value: u64) -> Result<Value, E> {
        Ok(Value::Number(value.into()))
    }

    fn visit_f64<E>(self, value: f64) -> Result<Value, E> {
        // JSON has no NaN or infinity, so every parsed float is finite and has a `Number`.
        Ok(Number::from_f64(value).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, value: &str) -> Result<Value, E> {
        Ok(Value::String(value.to_owned()))
    }

    fn visit_string<E>(self, value: String) -> Result<Value, E> {
        Ok(Value::String(value))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueKeys(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let UniqueKeys(value) = map.next_value()?;
            if object.contains_key(&key) {
                return Err(A::Error::custom(format!(
                    "the key `{key}` appears twice in one object; send it once"
                )));
            }
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
mod tests {
    use super::UniqueKeys;

    fn read(text: &str) -> Result<serde_json::Value, String> {
        serde_json::from_str::<UniqueKeys>(text)
            .map(|UniqueKeys(value)| value)
            .map_err(|err| err.to_string())
    }

    #[test]
    fn a_key_twice_is_refused_at_any_depth_and_everything_else_reads_as_serde_json_does() {
        for twice in [
            r#"{"a": 1, "a": 1}"#,
            r#"{"a": 1, "b": {"c": true, "c": false}}"#,
            r#"[{"x": [], "x": {}}]"#,
        ] {
            let err = read(twice).unwrap_err();
            assert!(err.contains("appears twice"), "{twice}: {err}");
        }
        for fine in [
            r#"{"a": 1, "b": {"a": 1}, "c": [{"a": 2}, {"a": 3}]}"#,
            r#"[-1, 18446744073709551615, 1.5e300, "s", null, true]"#,
            r#""just a string""#,
        ] {
            let expected: serde_json::Value = serde_json::from_str(fine).unwrap();
            assert_eq!(read(fine).unwrap(), expected, "{fine}");
        }
    }
}
