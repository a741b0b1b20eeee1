//! The keys a section of the file may hold, read from the loader's own types: serde's
//! derive hands every struct's field names to the deserializer it is read with, so a
//! deserializer that only writes them down lists exactly the keys the loader accepts. The
//! template (`--config-template`) is drawn from these lists, so a key added to the loader
//! is a key of the template, with no second list to keep in step.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

/// The keys `T` (a section's type, read with `deny_unknown_fields`) accepts, in the order
/// it declares them; none for a type that is not read as a table of named keys.
pub fn of<'de, T: Deserialize<'de>>() -> &'static [&'static str] {
    let mut found = None;
    let _ = T::deserialize(Collector { found: &mut found });
    found.unwrap_or(&[])
}

/// Writes down the field names it is handed, and reads nothing.
struct Collector<'a> {
    found: &'a mut Option<&'static [&'static str]>,
}

/// Why the collector stops: it has what it came for, or the type is no struct.
#[derive(Debug)]
struct Stop;

impl fmt::Display for Stop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("field names collected")
    }
}

impl std::error::Error for Stop {}

impl de::Error for Stop {
    fn custom<T: fmt::Display>(_: T) -> Stop {
        Stop
    }
}

impl<'de> Deserializer<'de> for Collector<'_> {
    type Error = Stop;

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Stop> {
        *self.found = Some(fields);
        Err(Stop)
    }

    fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)] // read only for its field names
    struct Section {
        first: Option<u32>,
        #[serde(rename = "second-key")]
        second: String,
    }

    #[test]
    fn a_sections_keys_are_its_fields_as_the_file_names_them() {
        assert_eq!(of::<Section>(), ["first", "second-key"]);
        assert!(of::<u32>().is_empty(), "no table, no keys");
    }
}
