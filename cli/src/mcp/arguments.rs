//! Checking a tool call's arguments. Every mistake becomes a sentence the model can act on.

use cheesedb::limits::{LEGS_PER_MEMORY_MAX, PARENTS_PER_LEG_MAX};
use cheesedb::Id;

use crate::legs::Parent;
use serde_json::{Map, Value};

/// A tool's arguments, with the names it accepts.
#[derive(Debug)]
pub struct ToolArguments {
    values: Map<String, Value>,
}

impl ToolArguments {
    /// Checks that `arguments` is an object (or absent) naming only `allowed` arguments.
    pub fn parse(arguments: Option<&Value>, allowed: &[&str]) -> Result<ToolArguments, String> {
        let values = match arguments {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(values)) => values.clone(),
            Some(_) => return Err(String::from("arguments must be a JSON object")),
        };
        if let Some(unknown) = values.keys().find(|name| !allowed.contains(&name.as_str())) {
            return Err(format!("unknown argument {unknown:?}; this tool takes: {}", allowed.join(", ")));
        }
        Ok(ToolArguments { values })
    }

    /// A required string.
    pub fn string(&self, name: &str) -> Result<&str, String> {
        match self.values.get(name) {
            Some(Value::String(text)) => Ok(text),
            Some(other) => Err(format!("{name} must be a string, not {}", type_name(other))),
            None => Err(format!("{name} is required")),
        }
    }

    /// An optional string.
    pub fn optional_string(&self, name: &str) -> Result<Option<&str>, String> {
        match self.values.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(text)) => Ok(Some(text)),
            Some(other) => Err(format!("{name} must be a string, not {}", type_name(other))),
        }
    }

    /// Legs whose parents may be ids of the agent's own or `{"space": NAME, "id": ID}`, a node
    /// of a space the agent reads.
    pub fn legs_with_shared(&self, name: &str) -> Result<Vec<Vec<Parent>>, String> {
        let own = self.legs_checked_shape(name)?;
        own.iter()
            .enumerate()
            .map(|(index, leg)| {
                leg.iter()
                    .map(|parent| match parent {
                        Value::Object(fields) => shared_parent(fields).ok_or_else(|| {
                            format!("{name}[{index}] holds {parent}, which is not {{\"space\": NAME, \"id\": ID}}")
                        }),
                        other => id_from(other)
                            .map(Parent::Own)
                            .map_err(|problem| format!("{name}[{index}] holds {other}, which {problem}")),
                    })
                    .collect()
            })
            .collect()
    }

    /// The legs of `name` as arrays of values, checked for their counts.
    fn legs_checked_shape(&self, name: &str) -> Result<Vec<Vec<Value>>, String> {
        let example = "e.g. [[1]] for one source, [[1, 2]] for a memory needing both, [[1], [2]] for either, [[{\"space\": \"team\", \"id\": 3}]] for node 3 of space team";
        let legs = match self.values.get(name) {
            Some(Value::Array(legs)) => legs,
            Some(other) => {
                return Err(format!("{name} must be an array of arrays of ids ({example}), not {}", type_name(other)))
            }
            None => return Err(format!("{name} is required: name the ids this memory was learned from ({example})")),
        };
        if legs.is_empty() {
            return Err(format!("{name} is empty: a memory must name what it was learned from ({example})"));
        }
        if legs.len() > LEGS_PER_MEMORY_MAX {
            return Err(format!("{name} has {} legs; at most {LEGS_PER_MEMORY_MAX} are allowed", legs.len()));
        }
        legs.iter()
            .enumerate()
            .map(|(index, leg)| {
                let Value::Array(parents) = leg else {
                    return Err(format!("{name}[{index}] must be an array of ids ({example}), not {}", type_name(leg)));
                };
                if parents.is_empty() {
                    return Err(format!("{name}[{index}] is empty: each leg must list at least one id"));
                }
                if parents.len() > PARENTS_PER_LEG_MAX {
                    let count = parents.len();
                    return Err(format!("{name}[{index}] has {count} ids; at most {PARENTS_PER_LEG_MAX} are allowed"));
                }
                Ok(parents.clone())
            })
            .collect()
    }

    /// An optional boolean, `default` when absent.
    pub fn boolean(&self, name: &str, default: bool) -> Result<bool, String> {
        match self.values.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(Value::Bool(value)) => Ok(*value),
            Some(other) => Err(format!("{name} must be true or false, not {}", type_name(other))),
        }
    }

    /// A required id.
    pub fn id(&self, name: &str) -> Result<Id, String> {
        match self.values.get(name) {
            Some(value) => id_from(value).map_err(|problem| format!("{name} {problem}")),
            None => Err(format!("{name} is required")),
        }
    }

    /// An optional whole number in `1..=maximum`, `default` when absent.
    pub fn count(&self, name: &str, default: u64, maximum: u64) -> Result<u64, String> {
        match self.values.get(name) {
            None | Some(Value::Null) => Ok(default),
            Some(value) => match value.as_u64() {
                Some(count) if (1..=maximum).contains(&count) => Ok(count),
                _ => Err(format!("{name} must be a whole number from 1 to {maximum}")),
            },
        }
    }

    /// An optional paging cursor: the string a previous page returned (a number is taken too).
    pub fn cursor(&self, name: &str) -> Result<u64, String> {
        let invalid = || format!("{name} must be the next_cursor string of a previous page");
        match self.values.get(name) {
            None | Some(Value::Null) => Ok(0),
            Some(Value::String(text)) => text.parse().map_err(|_| invalid()),
            Some(Value::Number(number)) => number.as_u64().ok_or_else(invalid),
            Some(_) => Err(invalid()),
        }
    }
}

/// `{"space": NAME, "id": ID}`, and nothing else.
fn shared_parent(fields: &Map<String, Value>) -> Option<Parent> {
    let (Some(Value::String(space)), Some(id)) = (fields.get("space"), fields.get("id")) else { return None };
    let id = id_from(id).ok()?;
    (fields.len() == 2).then(|| Parent::Shared { space: space.clone(), id })
}

fn id_from(value: &Value) -> Result<Id, String> {
    match value.as_u64() {
        Some(number) if number >= 1 => Ok(Id::from(number)),
        _ => Err(format!("must be an id: a whole number from 1, not {}", type_name(value))),
    }
}

fn type_name(value: &Value) -> String {
    match value {
        Value::Null => String::from("null"),
        Value::Bool(_) => String::from("a boolean"),
        Value::Number(number) => format!("the number {number}"),
        Value::String(text) if text.chars().count() <= 20 => format!("the string {text:?}"),
        Value::String(_) => String::from("a string"),
        Value::Array(_) => String::from("an array"),
        Value::Object(_) => String::from("an object"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn arguments(value: Value, allowed: &[&str]) -> ToolArguments {
        ToolArguments::parse(Some(&value), allowed).unwrap()
    }

    #[test]
    fn unknown_arguments_and_non_objects_are_refused() {
        assert!(ToolArguments::parse(Some(&json!({"agent": "bob"})), &["id"]).unwrap_err().contains("agent"));
        assert!(ToolArguments::parse(Some(&json!([1])), &["id"]).is_err());
        assert!(ToolArguments::parse(None, &["id"]).is_ok());
    }

    #[test]
    fn ids_must_be_positive_whole_numbers() {
        assert_eq!(arguments(json!({"id": 3}), &["id"]).id("id"), Ok(Id::from(3)));
        for bad in [json!(0), json!(-1), json!(1.5), json!("3"), json!(null), json!([3])] {
            assert!(arguments(json!({ "id": bad }), &["id"]).id("id").is_err(), "{bad}");
        }
    }

    #[test]
    fn legs_must_be_non_empty_arrays_of_ids() {
        let legs = arguments(json!({"legs": [[2, 1], [3]]}), &["legs"]).legs_with_shared("legs").unwrap();
        let own = |id| Parent::Own(Id::from(id));
        assert_eq!(legs, vec![vec![own(2), own(1)], vec![own(3)]]);
        for bad in [json!([]), json!([[]]), json!([1]), json!("1"), json!([["a"]]), json!({})] {
            assert!(arguments(json!({ "legs": bad }), &["legs"]).legs_with_shared("legs").is_err(), "{bad}");
        }
    }

    #[test]
    fn legs_may_name_a_space_s_node_and_nothing_else_shaped_like_one() {
        let given = arguments(json!({"legs": [[1, {"space": "team", "id": 3}]]}), &["legs"]);
        let shared = Parent::Shared { space: "team".into(), id: Id::from(3) };
        assert_eq!(given.legs_with_shared("legs"), Ok(vec![vec![Parent::Own(Id::from(1)), shared]]));
        for bad in [
            json!([[{"space": "team"}]]),
            json!([[{"space": 1, "id": 3}]]),
            json!([[{"space": "t", "id": 3, "x": 1}]]),
            json!([[]]),
            json!([]),
        ] {
            assert!(arguments(json!({ "legs": bad }), &["legs"]).legs_with_shared("legs").is_err(), "{bad}");
        }
    }

    #[test]
    fn booleans_and_counts_have_defaults_and_ranges() {
        let given = arguments(json!({"erase": false, "limit": 500}), &["erase", "limit"]);
        assert_eq!(given.boolean("erase", true), Ok(false));
        assert_eq!(given.boolean("strict", false), Ok(false));
        assert!(given.count("limit", 20, 100).is_err());
        assert!(arguments(json!({"erase": "yes"}), &["erase"]).boolean("erase", true).is_err());
    }
}
