//! Records the Rust compiler's version and the target at build time, for
//! `python -m bitplan`'s build line: a bug report about a wheel should say
//! which compiler made it, and that is only known here.

use std::env;
use std::process::Command;

fn main() {
    // Cargo passes the compiler it builds with (rustup's proxy, a pinned
    // toolchain, or a wrapper); `rustc` is only the fallback.
    let rustc = env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let version = Command::new(&rustc)
        .arg("--version")
        .output()
        .ok()
        .filter(|output| output.status.success())
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .map(|text| text.trim().to_owned())
        // An unknown version must not fail the build of a user's wheel.
        .unwrap_or_else(|| "unknown".to_owned());
    println!("cargo:rustc-env=BITPLAN_RUSTC_VERSION={version}");
    println!("cargo:rustc-env=BITPLAN_BUILD_TARGET={}", env::var("TARGET").unwrap_or_default());
    println!("cargo:rustc-env=BITPLAN_BUILD_PROFILE={}", env::var("PROFILE").unwrap_or_default());
    println!("cargo:rerun-if-env-changed=RUSTC");
    println!("cargo:rerun-if-changed=build.rs");
}
