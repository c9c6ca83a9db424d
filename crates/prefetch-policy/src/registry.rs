//! Policies by name: [`PolicyRegistry`] and the process-wide registry.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::balanced::BalancedPolicy;
use crate::error::RegistryError;
use crate::policy::{DefaultPolicy, PrefetchPolicy, RetainPolicy};

/// Makes a new instance of a registered policy.
pub type PolicyFactory = Arc<dyn Fn() -> Box<dyn PrefetchPolicy> + Send + Sync>;

/// A thread-safe map from policy name to a factory of that policy, as the
/// seed's registry: registering a name twice is an error, and creating an
/// unknown name is an error that lists the known ones.
///
/// [`global_registry`] is the process-wide one, with `balanced`, `default`
/// and `retain` registered; build a separate registry for tests or for embedding.
///
/// ```
/// use prefetch_policy::{DefaultPolicy, PolicyRegistry, Parallelism, PrefetchPolicy, RegistryError};
///
/// let registry = PolicyRegistry::with_builtin();
/// registry.register("sequential", || Box::new(DefaultPolicy::new().with_parallelism(Parallelism::Sequential)))?;
/// assert_eq!(registry.names(), ["balanced", "default", "retain", "sequential"]);
/// assert_eq!(registry.create("sequential")?.name(), "default");
/// assert!(matches!(registry.register("retain", || Box::new(DefaultPolicy::new())), Err(RegistryError::Duplicate { .. })));
/// # Ok::<(), RegistryError>(())
/// ```
#[derive(Default)]
pub struct PolicyRegistry {
    factories: RwLock<BTreeMap<String, PolicyFactory>>,
}

impl PolicyRegistry {
    /// An empty registry.
    pub fn new() -> PolicyRegistry {
        PolicyRegistry::default()
    }

    /// A registry with the built-in policies: `default` ([`DefaultPolicy`]),
    /// `retain` ([`RetainPolicy`]) and `balanced` ([`BalancedPolicy`]).
    pub fn with_builtin() -> PolicyRegistry {
        let registry = PolicyRegistry::new();
        let builtin: [(&str, PolicyFactory); 3] = [
            (DefaultPolicy::NAME, Arc::new(|| Box::new(DefaultPolicy::new()))),
            (RetainPolicy::NAME, Arc::new(|| Box::new(RetainPolicy::new()))),
            (BalancedPolicy::NAME, Arc::new(|| Box::new(BalancedPolicy::new()))),
        ];
        registry.write().extend(builtin.map(|(name, factory)| (name.to_owned(), factory)));
        registry
    }

    /// Registers `factory` under `name`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Duplicate`] if `name` is taken; the registry is
    /// unchanged.
    pub fn register(
        &self,
        name: impl Into<String>,
        factory: impl Fn() -> Box<dyn PrefetchPolicy> + Send + Sync + 'static,
    ) -> Result<(), RegistryError> {
        self.register_factory(name, Arc::new(factory))
    }

    /// [`register`](PolicyRegistry::register) with a shared factory.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Duplicate`] if `name` is taken.
    pub fn register_factory(&self, name: impl Into<String>, factory: PolicyFactory) -> Result<(), RegistryError> {
        use std::collections::btree_map::Entry;
        match self.write().entry(name.into()) {
            Entry::Occupied(taken) => Err(RegistryError::Duplicate { name: taken.key().clone() }),
            Entry::Vacant(free) => {
                free.insert(factory);
                Ok(())
            }
        }
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Whether a policy is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.read().contains_key(name)
    }

    /// A new instance of the policy registered under `name`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Unknown`], with the registered names, if none is
    /// registered under `name`.
    pub fn create(&self, name: &str) -> Result<Box<dyn PrefetchPolicy>, RegistryError> {
        // Clone the factory out and release the lock before calling it, so a
        // factory may itself use the registry.
        let factory = {
            let factories = self.read();
            match factories.get(name) {
                Some(factory) => Arc::clone(factory),
                None => {
                    return Err(RegistryError::Unknown {
                        name: name.to_owned(),
                        known: factories.keys().cloned().collect(),
                    });
                }
            }
        };
        Ok(factory())
    }

    // A panic while the lock is held cannot leave the map half-updated (each
    // critical section is one map operation), so a poisoned lock is still
    // a consistent registry: recover it instead of failing every later call.
    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, PolicyFactory>> {
        self.factories.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, PolicyFactory>> {
        self.factories.write().unwrap_or_else(PoisonError::into_inner)
    }
}

impl fmt::Debug for PolicyRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PolicyRegistry").field("names", &self.names()).finish()
    }
}

/// The process-wide registry, created on first use with `default`,
/// `retain` and `balanced` registered.
pub fn global_registry() -> &'static PolicyRegistry {
    static GLOBAL: OnceLock<PolicyRegistry> = OnceLock::new();
    GLOBAL.get_or_init(PolicyRegistry::with_builtin)
}

/// Registers a policy factory in the [`global_registry`] (the seed's
/// `register_prefetch_policy`).
///
/// # Errors
///
/// [`RegistryError::Duplicate`] if `name` is taken.
pub fn register_prefetch_policy(
    name: impl Into<String>,
    factory: impl Fn() -> Box<dyn PrefetchPolicy> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    global_registry().register(name, factory)
}

/// The names registered in the [`global_registry`], sorted (the seed's
/// `get_registered_prefetch_policies`).
///
/// ```
/// let names = prefetch_policy::registered_prefetch_policies();
/// assert!(names.iter().any(|n| n == "default") && names.iter().any(|n| n == "retain"));
/// ```
pub fn registered_prefetch_policies() -> Vec<String> {
    global_registry().names()
}

/// A new instance of the policy registered under `name` in the
/// [`global_registry`] (the seed's `create_prefetch_policy`).
///
/// # Errors
///
/// [`RegistryError::Unknown`] if none is registered under `name`.
///
/// ```
/// let policy = prefetch_policy::create_prefetch_policy("retain")?;
/// assert_eq!(policy.name(), "retain");
/// # Ok::<(), prefetch_policy::RegistryError>(())
/// ```
pub fn create_prefetch_policy(name: &str) -> Result<Box<dyn PrefetchPolicy>, RegistryError> {
    global_registry().create(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::Keys;

    #[test]
    fn builtin_names_and_instances() {
        let registry = PolicyRegistry::with_builtin();
        assert_eq!(registry.names(), ["balanced", "default", "retain"]);
        assert!(registry.contains("default") && !registry.contains("Default"));
        assert_eq!(registry.create("balanced").unwrap().name(), "balanced");
        assert_eq!(registry.create("default").unwrap().select_l1_retentions(Keys::count(2)), [false, false]);
        assert_eq!(registry.create("retain").unwrap().select_l1_retentions(Keys::count(2)), [true, true]);
        assert_eq!(format!("{registry:?}"), r#"PolicyRegistry { names: ["balanced", "default", "retain"] }"#);
    }

    #[test]
    fn duplicates_are_refused_and_leave_the_original() {
        let registry = PolicyRegistry::with_builtin();
        let error = registry.register("default", || Box::new(RetainPolicy::new())).unwrap_err();
        assert_eq!(error, RegistryError::Duplicate { name: "default".into() });
        assert_eq!(registry.create("default").unwrap().name(), "default");
    }

    #[test]
    fn unknown_names_list_the_known_ones() {
        let empty = PolicyRegistry::new();
        assert!(empty.names().is_empty());
        assert_eq!(
            empty.create("default").unwrap_err(),
            RegistryError::Unknown { name: "default".into(), known: vec![] }
        );
        let registry = PolicyRegistry::with_builtin();
        registry.register("b", || Box::new(DefaultPolicy::new())).unwrap();
        assert_eq!(
            registry.create("zzz").unwrap_err(),
            RegistryError::Unknown {
                name: "zzz".into(),
                known: vec!["b".into(), "balanced".into(), "default".into(), "retain".into()]
            }
        );
    }

    #[test]
    fn each_create_is_a_new_instance() {
        let registry = PolicyRegistry::with_builtin();
        let mut first = registry.create("default").unwrap();
        first.set_parallelism(crate::Parallelism::Sequential);
        let second = registry.create("default").unwrap();
        assert_ne!(format!("{first:?}"), format!("{second:?}"));
    }

    #[test]
    fn a_factory_may_use_the_registry() {
        let registry = Arc::new(PolicyRegistry::with_builtin());
        let inner = Arc::clone(&registry);
        registry.register("alias", move || inner.create("retain").unwrap()).unwrap();
        assert_eq!(registry.create("alias").unwrap().name(), "retain");
    }

    #[test]
    fn concurrent_registration_and_lookup() {
        let registry = PolicyRegistry::with_builtin();
        std::thread::scope(|scope| {
            for thread in 0..4 {
                let registry = &registry;
                scope.spawn(move || {
                    for i in 0..50 {
                        registry.register(format!("p{thread}-{i:02}"), || Box::new(DefaultPolicy::new())).unwrap();
                        assert!(registry.create("default").is_ok());
                    }
                });
            }
        });
        assert_eq!(registry.names().len(), 3 + 4 * 50);
        let names = registry.names();
        assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn global_registry_has_the_builtins() {
        let names = registered_prefetch_policies();
        assert!(names.contains(&"default".to_owned()) && names.contains(&"retain".to_owned()));
        register_prefetch_policy("registry-unit-test", || Box::new(RetainPolicy::new())).unwrap();
        assert_eq!(create_prefetch_policy("registry-unit-test").unwrap().name(), "retain");
        assert!(register_prefetch_policy("registry-unit-test", || Box::new(RetainPolicy::new())).is_err());
        assert!(matches!(create_prefetch_policy("nope"), Err(RegistryError::Unknown { .. })));
    }
}
