//! Properties of the case parser on generated input: valid cases in any
//! shape parse to exactly their lookups and plan as the reference does;
//! damaged or arbitrary text never panics, and whatever the parser accepts
//! the planner answers.

use bitmap_core::Bitmap;
use prefetch_plan::answer::{Planner, Trim};
use prefetch_plan::case::parse_case;
use prefetch_policy::reference::naive_first_wins_plan;
use prefetch_policy::{AdapterDescriptor, LookupResults};
use proptest::prelude::*;

/// A valid case and what it describes.
#[derive(Clone, Debug)]
struct Generated {
    num_keys: usize,
    /// Listed adapter indices, in the order written; `true` for the object
    /// form.
    adapters: Vec<(usize, bool)>,
    /// Adapter → held keys, and whether to write them as a bit string.
    lookup: Vec<(usize, Vec<usize>, bool)>,
    policy: Option<&'static str>,
    pretty: bool,
}

impl Generated {
    fn text(&self) -> String {
        let (newline, indent) = if self.pretty { ("\n", "  ") } else { ("", "") };
        let adapters: Vec<String> = self
            .adapters
            .iter()
            .map(
                |&(index, object)| {
                    if object { format!(r#"{{"index": {index}, "name": "a{index}"}}"#) } else { index.to_string() }
                },
            )
            .collect();
        let lookup: Vec<String> = self
            .lookup
            .iter()
            .map(|(adapter, keys, as_bits)| {
                let value = if *as_bits {
                    let bitmap = Bitmap::from_indices(self.num_keys, keys.iter().copied()).unwrap();
                    format!("\"{bitmap}\"")
                } else {
                    format!("[{}]", keys.iter().map(ToString::to_string).collect::<Vec<_>>().join(", "))
                };
                format!("{newline}{indent}{indent}\"{adapter}\": {value}")
            })
            .collect();
        let mut fields = vec![
            format!("{newline}{indent}\"lookup\": {{{}{newline}{indent}}}", lookup.join(",")),
            format!("{newline}{indent}\"num_keys\": {}", self.num_keys),
            format!("{newline}{indent}\"adapters\": [{}]", adapters.join(", ")),
        ];
        if let Some(policy) = self.policy {
            fields.push(format!("{newline}{indent}\"policy\": \"{policy}\""));
        }
        format!("{{{}{newline}}}", fields.join(","))
    }

    fn lookup_results(&self) -> LookupResults {
        self.lookup
            .iter()
            .map(|(adapter, keys, _)| (*adapter, Bitmap::from_indices(self.num_keys, keys.iter().copied()).unwrap()))
            .collect()
    }

    fn descriptors(&self) -> Vec<AdapterDescriptor> {
        self.adapters.iter().map(|&(index, _)| AdapterDescriptor::new(index, format!("a{index}"))).collect()
    }
}

fn generated() -> impl Strategy<Value = Generated> {
    (0usize..300).prop_flat_map(|num_keys| {
        let keys = if num_keys == 0 {
            Just(Vec::new()).boxed()
        } else {
            prop::collection::vec(0..num_keys, 0..2 * num_keys.min(100)).boxed()
        };
        (
            Just(num_keys),
            prop::sample::subsequence((0..8).collect::<Vec<_>>(), 0..=8).prop_shuffle(),
            prop::collection::vec(any::<bool>(), 8),
            prop::sample::subsequence((0..10).collect::<Vec<_>>(), 0..=10),
            prop::collection::vec((keys, any::<bool>()), 10),
            prop::option::of(prop::sample::select(&["default", "retain"][..])),
            any::<bool>(),
        )
            .prop_map(|(num_keys, listed, objects, answered, values, policy, pretty)| Generated {
                num_keys,
                adapters: listed.iter().zip(objects).map(|(&index, object)| (index, object)).collect(),
                lookup: answered.iter().zip(values).map(|(&adapter, (keys, bits))| (adapter, keys, bits)).collect(),
                policy,
                pretty,
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn valid_cases_parse_exactly_and_plan_as_the_reference(case in generated()) {
        let text = case.text();
        let parsed = parse_case(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(parsed.num_keys, case.num_keys);
        prop_assert_eq!(&parsed.lookup, &case.lookup_results());
        let listed: Vec<usize> = parsed.adapters.iter().map(|a| a.index).collect();
        prop_assert_eq!(listed, case.adapters.iter().map(|&(index, _)| index).collect::<Vec<_>>());
        prop_assert_eq!(parsed.policy.as_deref(), case.policy);

        let reference = naive_first_wins_plan(case.num_keys, &case.lookup_results(), &case.descriptors()).unwrap();
        let mut planner = Planner::new("default", Trim::None).unwrap();
        let answer = planner.answer(&parsed).unwrap();
        prop_assert_eq!(answer.plan(), &reference);
        let retain = case.policy == Some("retain");
        prop_assert_eq!(answer.retain(), &vec![retain; reference.planned_count()][..]);
        prop_assert_eq!(answer.prefix_len(), reference.merged().count_leading_ones());

        let mut trimming = Planner::new("default", Trim::Prefix).unwrap();
        let trimmed = trimming.answer(&parsed).unwrap();
        let mut expected = reference.clone();
        expected.trim_to_prefix(reference.prefix_len());
        prop_assert_eq!(trimmed.plan(), &expected);
        prop_assert_eq!(trimmed.retain().len(), trimmed.prefix_len());
    }

    #[test]
    fn damaged_cases_never_panic_and_accepted_ones_plan(
        case in generated(),
        damage in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(&DAMAGE[..])), 1..4),
    ) {
        let mut text = case.text().into_bytes();
        for (at, replacement) in damage {
            let at = at.index(text.len());
            text.splice(at..=at, replacement.bytes());
        }
        let Ok(text) = String::from_utf8(text) else { return Ok(()) };
        if let Ok(parsed) = parse_case(&text) {
            let mut planner = Planner::new("default", Trim::Prefix).unwrap();
            planner.answer(&parsed).map_err(|e| TestCaseError::fail(format!("{e}: {text}")))?;
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "[\\[\\]{}\":,0-9a-z \\-.\n\\\\]{0,80}") {
        let _ = parse_case(&text);
    }
}

/// What a damaged case gets in place of one byte: JSON's punctuation,
/// digits, signs, big numbers, other fields' names, escapes.
const DAMAGE: [&str; 22] = [
    "",
    "{",
    "}",
    "[",
    "]",
    "\"",
    ",",
    ":",
    "0",
    "1",
    "9",
    "-",
    ".5",
    "e9",
    "null",
    "true",
    " ",
    "\\",
    "\\u0030",
    "99999999999999999999",
    "\"num_keys\": 1, ",
    "\"policy\": \"x\", ",
];
