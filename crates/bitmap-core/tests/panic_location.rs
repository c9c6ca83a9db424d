//! Panics point at the caller's line (`#[track_caller]`), as slice indexing
//! does, not at a line inside the crate.
//!
//! A test binary of its own: it installs a panic hook, which is global to the
//! process and would see the panics of other tests running in parallel.

use std::panic::{self, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use bitmap_core::Bitmap;

#[test]
fn panics_are_reported_at_the_callers_line() {
    let location = Arc::new(Mutex::new(None));
    let recorded = Arc::clone(&location);
    panic::set_hook(Box::new(move |info| {
        *recorded.lock().unwrap() = info.location().map(|l| (l.file().to_owned(), l.line()));
    }));

    let panicked_at = |line: u32, operation: &dyn Fn()| {
        let result = panic::catch_unwind(AssertUnwindSafe(operation));
        assert!(result.is_err(), "line {line} did not panic");
        let (file, at) = location.lock().unwrap().take().expect("the hook saw the panic");
        assert!(file.ends_with("panic_location.rs"), "reported in {file}:{at}, not at the caller");
        assert_eq!(at, line);
    };

    let a = Bitmap::new(10);
    let b = Bitmap::new(12);
    panicked_at(line!() + 1, &|| {
        Bitmap::new(3).set(3);
    });
    panicked_at(line!() + 1, &|| {
        let _ = Bitmap::new(3).test(5);
    });
    panicked_at(line!() + 1, &|| {
        let _ = &a & &b;
    });
    panicked_at(line!() + 1, &|| {
        let _ = a.clone() - b.clone();
    });
    panicked_at(line!() + 1, &|| {
        let _ = &a ^ b.clone();
    });
    panicked_at(line!() + 2, &|| {
        let mut c = a.clone();
        c |= &b;
    });
    panicked_at(line!() + 1, &|| {
        let _ = a.and_popcount(&b);
    });
    panicked_at(line!() + 1, &|| {
        let _ = a.gather(&[1, 2, 3]);
    });

    let _ = panic::take_hook();
}
