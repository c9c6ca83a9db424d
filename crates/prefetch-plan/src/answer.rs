//! Planning a [`Case`] with its policy: [`Planner`], and the [`Answer`] it
//! writes.
//!
//! # The answer
//!
//! ```json
//! {"plan": {"0": [0, 3], "1": [1, 2], "2": [4]}, "retain": [false, false, false, false, false], "prefix_len": 5}
//! ```
//!
//! | field | value |
//! |---|---|
//! | `plan` | adapter index → the keys it loads, ascending; adapters with nothing to load are left out, adapters ascending |
//! | `retain` | the policy's L1 retention decision for each planned key, in ascending key order (so as many as the plan has keys) |
//! | `prefix_len` | how many leading keys, from key 0, the plan covers without a gap |
//!
//! With [`Trim::Prefix`] the plan is first cut to `prefix_len` keys, as
//! LMCache's controller does before loading (only a gap-free run from key 0
//! is useful to the model), and `retain` covers those keys.

use core::fmt;
use std::io::{self, Write};

use bitmap_core::{Bitmap, Ones};
use prefetch_policy::{
    DefaultGridPolicy, Grid, GridMap, GridPlan, GridPolicy, GridRequest, Keys, LoadPlan, PrefetchPolicy, RegistryError,
    global_registry,
};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use crate::case::Case;
pub use crate::error::AnswerError;
use crate::grid_case::GridCase;
use crate::json;

/// Whether to trim the plan before answering.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Trim {
    /// Answer the policy's plan as it is.
    #[default]
    None,
    /// Cut the plan to its loadable prefix (`prefix_len` keys), as the
    /// controller does before loading.
    Prefix,
}

/// Plans cases one after another, keeping one instance of each policy it
/// has used and one [`LoadPlan`] whose buffers every case reuses.
///
/// ```
/// use prefetch_plan::answer::{Planner, Trim};
/// use prefetch_plan::case::parse_case;
///
/// let mut planner = Planner::new("default", Trim::None)?;
/// let case = parse_case(r#"{"num_keys": 4, "adapters": [0, 1], "lookup": {"0": [0, 3], "1": "1100"}, "policy": "retain"}"#)?;
/// let answer = planner.answer(&case)?;
/// assert_eq!(answer.to_string(), r#"{"plan": {"0": [0, 3], "1": [1]}, "retain": [true, true, true], "prefix_len": 2}"#);
///
/// let mut trimming = Planner::new("default", Trim::Prefix)?;
/// let answer = trimming.answer(&case)?;
/// assert_eq!(answer.to_string(), r#"{"plan": {"0": [0], "1": [1]}, "retain": [true, true], "prefix_len": 2}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct Planner {
    default_policy: String,
    trim: Trim,
    /// The policies used so far, by name: a handful at most, so a list.
    policies: Vec<(String, Box<dyn PrefetchPolicy>)>,
    plan: LoadPlan,
    retain: Vec<bool>,
    grid_plan: GridPlan,
}

impl Planner {
    /// A planner that uses `default_policy` for cases that name none, from
    /// [`global_registry`].
    ///
    /// # Errors
    ///
    /// [`RegistryError::Unknown`], listing the known names, if
    /// `default_policy` is not registered.
    pub fn new(default_policy: &str, trim: Trim) -> Result<Planner, RegistryError> {
        let mut planner = Planner {
            default_policy: default_policy.to_owned(),
            trim,
            policies: Vec::new(),
            plan: LoadPlan::new(0),
            retain: Vec::new(),
            grid_plan: GridPlan::new(),
        };
        policy(&mut planner.policies, default_policy)?;
        Ok(planner)
    }

    /// Plans `case` with its policy (else the default one) and returns the
    /// answer, which borrows the planner's buffers until the next case.
    ///
    /// # Errors
    ///
    /// [`AnswerError`] if the policy is unknown or refuses the case; a case
    /// from [`parse_case`](crate::case::parse_case) passes the checks of the
    /// built-in policies.
    pub fn answer(&mut self, case: &Case) -> Result<Answer<'_>, AnswerError> {
        let name = case.policy.as_deref().unwrap_or(&self.default_policy);
        let policy = policy(&mut self.policies, name)?;
        policy.select_load_plan_into(Keys::count(case.num_keys), &case.lookup, &case.adapters, &mut self.plan)?;
        let prefix_len = match self.trim {
            Trim::None => self.plan.prefix_len(),
            Trim::Prefix => self.plan.trim_to_loadable_prefix(),
        };
        // The policies see keys only as a count here: the CLI has no key
        // objects. Planned keys are in ascending order, so the decisions are
        // too.
        policy.select_l1_retentions_into(Keys::count(self.plan.planned_count()), &mut self.retain);
        Ok(Answer { plan: &self.plan, retain: &self.retain, prefix_len })
    }
}

impl Planner {
    /// Plans a grid case with the `default` grid policy (the greedy plan
    /// of LMCache's newer `plan_load`; the grid policies differ only in
    /// retention, which the grid answer does not carry) and returns the
    /// answer, which borrows the planner's plan until the next case.
    ///
    /// # Errors
    ///
    /// [`AnswerError::Hybrid`] if the plan refuses the case: a sliding
    /// window under `"fetching": "full"`.
    ///
    /// ```
    /// use prefetch_plan::answer::{Planner, Trim};
    /// use prefetch_plan::grid_case::parse_grid_case;
    ///
    /// let case = parse_grid_case(r#"{"windows": [-1, 2], "num_chunks": 5,
    ///     "l1": {"0": ["11000", [2, 3]]}, "l2": {"1": ["11110", "00111"]}}"#)?;
    /// let mut planner = Planner::new("default", Trim::None)?;
    /// assert_eq!(
    ///     planner.answer_grid(&case)?.to_string(),
    ///     r#"{"l1": {"0": [[0, 1], [2, 3]]}, "l2": {"1": [[2, 3], []]}, "hit": 4}"#
    /// );
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn answer_grid(&mut self, case: &GridCase) -> Result<GridAnswer<'_>, AnswerError> {
        let request = GridRequest::new(&case.windows, case.num_chunks, &case.l1, &case.l2, case.fetching);
        DefaultGridPolicy::new().plan_load_into(&request, &mut self.grid_plan)?;
        Ok(GridAnswer { plan: &self.grid_plan })
    }
}

/// The answer to a grid case: `{"l1": {"0": [[cols…], …]}, "l2": {…},
/// "hit": N}`, each tier index → one list of planned chunk indices per
/// row (indices with nothing to load left out), and the hit length.
///
/// Its `Display` is the JSON line without the newline.
#[derive(Clone, Copy, Debug)]
pub struct GridAnswer<'p> {
    plan: &'p GridPlan,
}

impl<'p> GridAnswer<'p> {
    /// The plan.
    pub fn plan(&self) -> &'p GridPlan {
        self.plan
    }

    /// Writes the answer as one line of JSON, newline included.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_line<W: Write>(&self, writer: W) -> io::Result<()> {
        json::write_line(writer, self)
    }
}

impl fmt::Display for GridAnswer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&json::to_string(self))
    }
}

impl Serialize for GridAnswer<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut answer = serializer.serialize_struct("GridAnswer", 3)?;
        answer.serialize_field("l1", &GridMapJson(self.plan.l1()))?;
        answer.serialize_field("l2", &GridMapJson(self.plan.l2()))?;
        answer.serialize_field("hit", &self.plan.hit())?;
        answer.end()
    }
}

/// A grid map as `{"index": [[cols…], …]}`, streamed from the bitmaps.
struct GridMapJson<'a>(&'a GridMap);

impl Serialize for GridMapJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(index, grid)| (index, GridJson(grid))))
    }
}

/// A grid as an array of its rows' set-bit index arrays.
struct GridJson<'a>(&'a Grid);

impl Serialize for GridJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let grid = self.0;
        serializer.collect_seq((0..grid.num_rows()).map(|row| RowJson(grid.row_ones(row))))
    }
}

/// One grid row's set columns (an iterator, serialized once).
struct RowJson<'a>(Ones<'a>);

impl Serialize for RowJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.clone())
    }
}

/// Rows as an array of their set bits' index arrays.
pub(crate) struct RowsJson<'a>(pub(crate) &'a [Bitmap]);

impl Serialize for RowsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(KeysJson))
    }
}

/// The policy registered as `name`, created on first use.
fn policy<'p>(
    policies: &'p mut Vec<(String, Box<dyn PrefetchPolicy>)>,
    name: &str,
) -> Result<&'p dyn PrefetchPolicy, RegistryError> {
    let at = match policies.iter().position(|(known, _)| known == name) {
        Some(at) => at,
        None => {
            policies.push((name.to_owned(), global_registry().create(name)?));
            policies.len() - 1
        }
    };
    Ok(policies[at].1.as_ref())
}

/// The answer to one case: the plan, the retention decisions and the
/// prefix length (see the [module docs](self)).
///
/// Its `Display` is the JSON line without the newline.
#[derive(Clone, Copy, Debug)]
pub struct Answer<'p> {
    plan: &'p LoadPlan,
    retain: &'p [bool],
    prefix_len: usize,
}

impl<'p> Answer<'p> {
    /// The plan (trimmed if the planner trims).
    pub fn plan(&self) -> &'p LoadPlan {
        self.plan
    }

    /// The retention decision for each planned key, in key order.
    pub fn retain(&self) -> &'p [bool] {
        self.retain
    }

    /// The number of leading keys the plan covers without a gap.
    pub fn prefix_len(&self) -> usize {
        self.prefix_len
    }

    /// Writes the answer as one line of JSON, newline included.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_line<W: Write>(&self, writer: W) -> io::Result<()> {
        json::write_line(writer, self)
    }
}

impl fmt::Display for Answer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&json::to_string(self))
    }
}

impl Serialize for Answer<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut answer = serializer.serialize_struct("Answer", 3)?;
        answer.serialize_field("plan", &PlanJson(self.plan))?;
        answer.serialize_field("retain", self.retain)?;
        answer.serialize_field("prefix_len", &self.prefix_len)?;
        answer.end()
    }
}

/// A plan as `{"adapter": [keys…]}`, streamed from the bitmaps (no list of
/// indices is built).
struct PlanJson<'a>(&'a LoadPlan);

impl Serialize for PlanJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        // serde_json writes integer map keys as strings: "0".
        serializer.collect_map(self.0.iter().map(|(adapter, keys)| (adapter, KeysJson(keys))))
    }
}

/// A bitmap as the array of its set bits' indices.
pub(crate) struct KeysJson<'a>(pub(crate) &'a Bitmap);

impl Serialize for KeysJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.ones())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::case::parse_case;

    #[test]
    fn the_issue_example() {
        let case = parse_case(
            r#"{"num_keys": 5, "adapters": [0, 1, 2], "lookup": {"0": [0, 3], "1": [1, 2, 3], "2": [2, 3, 4]}, "policy": "default"}"#,
        )
        .unwrap();
        let mut planner = Planner::new("retain", Trim::None).unwrap();
        let answer = planner.answer(&case).unwrap();
        assert_eq!(
            answer.to_string(),
            r#"{"plan": {"0": [0, 3], "1": [1, 2], "2": [4]}, "retain": [false, false, false, false, false], "prefix_len": 5}"#
        );
        let mut line = Vec::new();
        answer.write_line(&mut line).unwrap();
        assert_eq!(line.last(), Some(&b'\n'));
    }

    #[test]
    fn retain_has_one_decision_per_planned_key() {
        let case = parse_case(r#"{"num_keys": 6, "adapters": [0], "lookup": {"0": "101001"}}"#).unwrap();
        let mut planner = Planner::new("retain", Trim::None).unwrap();
        let answer = planner.answer(&case).unwrap();
        assert_eq!((answer.retain(), answer.prefix_len()), (&[true; 3][..], 1));
        let mut trimming = Planner::new("retain", Trim::Prefix).unwrap();
        let answer = trimming.answer(&case).unwrap();
        assert_eq!(answer.to_string(), r#"{"plan": {"0": [0]}, "retain": [true], "prefix_len": 1}"#);
    }

    #[test]
    fn unknown_default_policy() {
        let error = Planner::new("fastest", Trim::None).unwrap_err();
        assert!(matches!(error, RegistryError::Unknown { ref name, .. } if name == "fastest"));
    }

    #[test]
    fn buffers_are_reused_without_stale_state() {
        let mut planner = Planner::new("default", Trim::None).unwrap();
        let big =
            parse_case(r#"{"num_keys": 200, "adapters": [0, 1], "lookup": {"0": [199], "1": [0, 199]}}"#).unwrap();
        let small = parse_case(r#"{"num_keys": 2, "adapters": [1], "lookup": {"1": "01"}}"#).unwrap();
        assert_eq!(
            planner.answer(&big).unwrap().to_string(),
            r#"{"plan": {"0": [199], "1": [0]}, "retain": [false, false], "prefix_len": 1}"#
        );
        assert_eq!(
            planner.answer(&small).unwrap().to_string(),
            r#"{"plan": {"1": [1]}, "retain": [false], "prefix_len": 0}"#
        );
    }
}
