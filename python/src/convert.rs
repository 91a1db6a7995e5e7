//! Python arguments turned into the engine's values, before any call lets go of the GIL.
//!
//! A value Python can hold but the engine cannot (an id of -1 or 2**70, a mode it does not
//! know) is an `InvalidArgumentError`; a value of the wrong type altogether is a `TypeError`, as
//! Python itself would raise.

use cheesedb::{Id, Leg, Mode, Removal, TrustLevel, TrustRules};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyMapping, PyString};

use crate::errors::invalid_argument;

/// The content of a lot or memory: the bytes of a `bytes` or `bytearray`, or a `str` as UTF-8.
///
/// # Errors
///
/// `TypeError` for anything else; `UnicodeEncodeError` for a str holding lone surrogates.
pub(crate) fn content(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(bytes) = value.cast::<PyBytes>() {
        return Ok(bytes.as_bytes().to_vec());
    }
    if let Ok(text) = value.cast::<PyString>() {
        return Ok(text.to_cow()?.into_owned().into_bytes());
    }
    if let Ok(array) = value.cast::<PyByteArray>() {
        return Ok(array.to_vec());
    }
    Err(PyTypeError::new_err(format!("content must be str or bytes, not {}", type_name(value))))
}

/// A label, an agent name or a query: a str.
///
/// # Errors
///
/// `TypeError` for anything but a str; `UnicodeEncodeError` for one holding lone surrogates.
pub(crate) fn text(value: &Bound<'_, PyAny>, what: &str) -> PyResult<String> {
    match value.cast::<PyString>() {
        Ok(text) => Ok(text.to_cow()?.into_owned()),
        Err(_) => Err(PyTypeError::new_err(format!("{what} must be str, not {}", type_name(value)))),
    }
}

/// An id: an int from 0 to 2**64 - 1.
///
/// # Errors
///
/// `TypeError` for anything but an int; `InvalidArgumentError` for one out of that range.
pub(crate) fn id(value: &Bound<'_, PyAny>) -> PyResult<Id> {
    whole_number(value, "an id").map(Id::from)
}

/// A search limit: an int from 0 to the largest size of this machine.
///
/// # Errors
///
/// `TypeError` for anything but an int; `InvalidArgumentError` for one out of that range.
pub(crate) fn limit(value: &Bound<'_, PyAny>) -> PyResult<usize> {
    let number = whole_number(value, "a limit")?;
    usize::try_from(number).map_err(|_| invalid_argument(format!("a limit is at most {}, not {number}", usize::MAX)))
}

/// An int that fits in 64 bits without a sign. A bool is an int to Python (`True == 1`), but
/// `get(True)` is a mistake, never a way to say 1: it is refused as the other types are.
fn whole_number(value: &Bound<'_, PyAny>, what: &str) -> PyResult<u64> {
    if !value.is_instance_of::<PyInt>() || value.is_instance_of::<PyBool>() {
        return Err(PyTypeError::new_err(format!("{what} must be int, not {}", type_name(value))));
    }
    value.extract::<u64>().map_err(|_| {
        let shown = value.repr().map(|repr| repr.to_string()).unwrap_or_default();
        invalid_argument(format!("{what} is a whole number from 0 to 2**64 - 1, not {shown}"))
    })
}

/// The legs of a memory: an iterable of iterables of ids, such as `[[a], [b, c]]`.
///
/// # Errors
///
/// `TypeError` when `value` or one of its legs is not iterable (a str or bytes is refused as a
/// leg: its items are not ids) or an id is not an int; `InvalidArgumentError` for an id out of
/// range. Empty legs and a memory without legs are the engine's to refuse.
pub(crate) fn legs(value: &Bound<'_, PyAny>) -> PyResult<Vec<Leg>> {
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("legs must be a list of lists of ids, such as [[a], [b, c]]"));
    }
    let mut legs = Vec::new();
    for leg in value.try_iter()? {
        let leg = leg?;
        if leg.is_instance_of::<PyString>() || leg.is_instance_of::<PyBytes>() || leg.is_instance_of::<PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "each leg must be a list of ids, such as [a, b], not {}",
                type_name(&leg)
            )));
        }
        let parents = leg.try_iter()?.map(|parent| id(&parent?)).collect::<PyResult<Vec<Id>>>()?;
        legs.push(parents.into_iter().collect());
    }
    Ok(legs)
}

/// A vector: a sequence of numbers, kept as 32-bit floats (as the engine stores them). Numbers
/// too large for 32 bits become infinite, which the engine refuses with the rest.
///
/// # Errors
///
/// `TypeError` when `value` is not a sequence of numbers.
pub(crate) fn vector(value: &Bound<'_, PyAny>) -> PyResult<Vec<f32>> {
    if value.is_instance_of::<PyString>() || value.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("a vector must be a sequence of numbers, not a string"));
    }
    let mut numbers = Vec::new();
    for number in value.try_iter()? {
        let number: f64 = number?.extract()?;
        // The engine keeps 32-bit floats; the narrowing is the documented behavior.
        #[allow(clippy::cast_possible_truncation)]
        numbers.push(number as f32);
    }
    Ok(numbers)
}

/// A recall mode: "fair" or "strict".
///
/// # Errors
///
/// `TypeError` for anything but a str; `InvalidArgumentError` for any other text.
pub(crate) fn mode(value: &Bound<'_, PyAny>) -> PyResult<Mode> {
    match text(value, "mode")?.as_str() {
        "fair" => Ok(Mode::Fair),
        "strict" => Ok(Mode::Strict),
        other => Err(invalid_argument(format!("mode is \"fair\" or \"strict\", not {other:?}"))),
    }
}

/// Trust rules: a mapping of lot label (str) to "low", "normal" or "high".
///
/// # Errors
///
/// `TypeError` for anything but a mapping of str to str; `InvalidArgumentError` for a level
/// that is not one of those words.
pub(crate) fn trust_rules(value: &Bound<'_, PyAny>) -> PyResult<TrustRules> {
    let mapping = value.cast::<PyMapping>().map_err(|_| {
        PyTypeError::new_err(format!("trust_rules must be a dict of label to level, not {}", type_name(value)))
    })?;
    let mut rules = TrustRules::new();
    for item in mapping.items()?.try_iter()? {
        let (label, level): (Bound<'_, PyAny>, Bound<'_, PyAny>) = item?.extract()?;
        let label = text(&label, "a trust rule's label")?;
        let level = text(&level, "a trust level")?;
        let level: TrustLevel = level.parse().map_err(|_| {
            invalid_argument(format!("a trust level is \"low\", \"normal\" or \"high\", not {level:?}"))
        })?;
        rules.set(&label, level);
    }
    Ok(rules)
}

/// What a recall does to the text of what it removes: erased from the files, or hidden.
pub(crate) fn removal(erase: bool) -> Removal {
    if erase {
        Removal::Erase
    } else {
        Removal::Untrusted
    }
}

/// The name of the type of `value`, for messages.
fn type_name(value: &Bound<'_, PyAny>) -> String {
    value.get_type().name().map(|name| name.to_string()).unwrap_or_else(|_| "this type".to_owned())
}

/// Implements `FromPyObject` for an argument type through one of the functions above, so that
/// a method can take it as a parameter (and a default) and pyo3 names the argument in errors.
macro_rules! argument {
    ($(#[$doc:meta])* $name:ident($inner:ty) = $convert:path) => {
        $(#[$doc])*
        pub(crate) struct $name(pub(crate) $inner);

        impl<'a, 'py> FromPyObject<'a, 'py> for $name {
            type Error = PyErr;

            fn extract(value: pyo3::Borrowed<'a, 'py, PyAny>) -> PyResult<$name> {
                $convert(&value).map($name)
            }
        }
    };
}

argument!(
    /// The content of a lot or memory (see [`content`]).
    Content(Vec<u8>) = content
);
argument!(
    /// An id (see [`id`]).
    IdArgument(Id) = id
);
argument!(
    /// A search limit (see [`limit`]).
    Limit(usize) = limit
);
argument!(
    /// The legs of a memory (see [`legs`]).
    Legs(Vec<Leg>) = legs
);
argument!(
    /// A vector (see [`vector`]).
    Vector(Vec<f32>) = vector
);
argument!(
    /// A recall mode (see [`mode`]).
    ModeArgument(Mode) = mode
);
argument!(
    /// Trust rules (see [`trust_rules`]).
    TrustRulesArgument(TrustRules) = trust_rules
);
