//! `prefetch-plan features`: the CPU features that matter to the kernels,
//! the kernels this CPU runs, and the one in use.

use std::io::{self, Write};

use bitmap_core::kernel::{KERNEL_ENV_VAR, Kernel, KernelError};
use serde::Serialize;
use serde::ser::Serializer;

use crate::json;

/// What `features` reports.
///
/// As JSON (`--json`), one line:
///
/// ```json
/// {"arch": "x86_64", "features": {"popcnt": true, "avx2": true, "avx512f": false, "avx512bw": false, "avx512vl": false, "avx512vpopcntdq": false}, "kernels": ["scalar", "portable", "avx2"], "active": "avx2", "forced_by_env": null}
/// ```
///
/// `active` is `null` when `BITMAP_CORE_KERNEL` names a kernel that cannot
/// run here (the command then also reports the error and exits with
/// status 2); `forced_by_env` is the variable's value when it is set.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct FeatureReport {
    /// The CPU architecture the binary was built for.
    pub arch: &'static str,
    /// Each feature that matters on this architecture, and whether the CPU
    /// has it, in a fixed order.
    #[serde(serialize_with = "as_map")]
    pub features: Vec<(&'static str, bool)>,
    /// The kernels this CPU can run, slowest first.
    pub kernels: Vec<&'static str>,
    /// The kernel bitmap operations use, if it could be chosen.
    pub active: Option<&'static str>,
    /// `BITMAP_CORE_KERNEL`, if set (and not blank).
    pub forced_by_env: Option<String>,
}

fn as_map<S: Serializer>(features: &[(&'static str, bool)], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_map(features.iter().copied())
}

impl FeatureReport {
    /// Detects the features and kernels, and selects the active kernel
    /// (which honours `BITMAP_CORE_KERNEL`). Also returns the kernel error,
    /// if the variable names a kernel that cannot be used.
    pub fn detect() -> (FeatureReport, Option<KernelError>) {
        let active = Kernel::try_active();
        let report = FeatureReport {
            arch: std::env::consts::ARCH,
            features: cpu_features(),
            kernels: Kernel::available().into_iter().map(Kernel::name).collect(),
            active: active.as_ref().ok().map(|kernel| kernel.name()),
            forced_by_env: std::env::var(KERNEL_ENV_VAR).ok().filter(|value| !value.trim().is_empty()),
        };
        (report, active.err())
    }

    /// Writes the report for a person to read.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_text<W: Write>(&self, mut out: W) -> io::Result<()> {
        writeln!(out, "arch:     {}", self.arch)?;
        let features: Vec<String> =
            self.features.iter().map(|&(name, has)| format!("{name} {}", if has { "yes" } else { "no" })).collect();
        let features =
            if features.is_empty() { "(none checked on this architecture)".to_owned() } else { features.join(", ") };
        writeln!(out, "features: {features}")?;
        writeln!(out, "kernels:  {}", self.kernels.join(", "))?;
        let why = match &self.forced_by_env {
            Some(value) => format!("{KERNEL_ENV_VAR}={value}"),
            None => format!("the fastest available; set {KERNEL_ENV_VAR} to force one"),
        };
        match self.active {
            Some(active) => writeln!(out, "active:   {active} ({why})"),
            None => writeln!(out, "active:   none ({why} cannot be used)"),
        }
    }

    /// Writes the report as one line of JSON.
    ///
    /// # Errors
    ///
    /// The writer's.
    pub fn write_json<W: Write>(&self, out: W) -> io::Result<()> {
        json::write_line(out, self)
    }
}

/// The features the kernels use or could use, as the CPU reports them.
fn cpu_features() -> Vec<(&'static str, bool)> {
    #[cfg(target_arch = "x86_64")]
    {
        // popcnt and avx2: the AVX2 kernel needs both. The AVX-512 kernel
        // needs all six.
        vec![
            ("popcnt", std::arch::is_x86_feature_detected!("popcnt")),
            ("avx2", std::arch::is_x86_feature_detected!("avx2")),
            ("avx512f", std::arch::is_x86_feature_detected!("avx512f")),
            ("avx512bw", std::arch::is_x86_feature_detected!("avx512bw")),
            ("avx512vl", std::arch::is_x86_feature_detected!("avx512vl")),
            ("avx512vpopcntdq", std::arch::is_x86_feature_detected!("avx512vpopcntdq")),
        ]
    }
    #[cfg(target_arch = "aarch64")]
    {
        // neon: the NEON kernel. sve: what a future SVE kernel would need.
        vec![
            ("neon", std::arch::is_aarch64_feature_detected!("neon")),
            ("sve", std::arch::is_aarch64_feature_detected!("sve")),
        ]
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_the_kernels_and_the_active_one() {
        let (report, error) = FeatureReport::detect();
        assert!(report.kernels.starts_with(&["scalar", "portable"]));
        assert_eq!(report.active.is_none(), error.is_some());
        if let Some(active) = report.active {
            assert!(report.kernels.contains(&active));
        }
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            report.kernels.contains(&"avx2"),
            report.features.contains(&("avx2", true)) && report.features.contains(&("popcnt", true))
        );
        #[cfg(target_arch = "x86_64")]
        assert_eq!(
            report.kernels.contains(&"avx512"),
            report.features.iter().all(|&(_, has)| has),
            "the avx512 kernel is listed exactly when the CPU has every feature listed"
        );
    }

    #[test]
    fn text_and_json() {
        let report = FeatureReport {
            arch: "x86_64",
            features: vec![("popcnt", true), ("avx2", false)],
            kernels: vec!["scalar", "portable"],
            active: Some("portable"),
            forced_by_env: None,
        };
        let mut text = Vec::new();
        report.write_text(&mut text).unwrap();
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "arch:     x86_64\nfeatures: popcnt yes, avx2 no\nkernels:  scalar, portable\n\
             active:   portable (the fastest available; set BITMAP_CORE_KERNEL to force one)\n"
        );
        let mut line = Vec::new();
        report.write_json(&mut line).unwrap();
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "{\"arch\": \"x86_64\", \"features\": {\"popcnt\": true, \"avx2\": false}, \"kernels\": [\"scalar\", \
             \"portable\"], \"active\": \"portable\", \"forced_by_env\": null}\n"
        );
        let forced = FeatureReport { active: None, forced_by_env: Some("neon".into()), ..report };
        let mut text = Vec::new();
        forced.write_text(&mut text).unwrap();
        assert!(
            String::from_utf8(text).unwrap().ends_with("active:   none (BITMAP_CORE_KERNEL=neon cannot be used)\n")
        );
    }
}
