//! Policies by name: [`PolicyRegistry`] (flat plans) and
//! [`GridPolicyRegistry`] (grid plans), each with a process-wide registry.
//! Both are one generic map of factories, `Factories`.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use crate::balanced::BalancedPolicy;
use crate::error::RegistryError;
use crate::grid::policy::{DefaultGridPolicy, GridPolicy, RetainGridPolicy};
use crate::policy::{DefaultPolicy, PrefetchPolicy, RetainPolicy};

/// Makes a new instance of a registered policy.
pub type PolicyFactory = Arc<dyn Fn() -> Box<dyn PrefetchPolicy> + Send + Sync>;

/// Makes a new instance of a registered grid policy.
pub type GridPolicyFactory = Arc<dyn Fn() -> Box<dyn GridPolicy> + Send + Sync>;

/// A shared factory of `Box<P>`.
type Factory<P> = Arc<dyn Fn() -> Box<P> + Send + Sync>;

/// Name → factory of `Box<P>`, thread-safe: what both registries are.
struct Factories<P: ?Sized> {
    factories: RwLock<BTreeMap<String, Factory<P>>>,
}

impl<P: ?Sized> Default for Factories<P> {
    fn default() -> Self {
        Factories { factories: RwLock::new(BTreeMap::new()) }
    }
}

impl<P: ?Sized> Factories<P> {
    fn with(builtin: Vec<(&str, Factory<P>)>) -> Self {
        let factories = Factories::default();
        factories.write().extend(builtin.into_iter().map(|(name, factory)| (name.to_owned(), factory)));
        factories
    }

    fn register(&self, name: String, factory: Factory<P>) -> Result<(), RegistryError> {
        use std::collections::btree_map::Entry;
        match self.write().entry(name) {
            Entry::Occupied(taken) => Err(RegistryError::Duplicate { name: taken.key().clone() }),
            Entry::Vacant(free) => {
                free.insert(factory);
                Ok(())
            }
        }
    }

    fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    fn contains(&self, name: &str) -> bool {
        self.read().contains_key(name)
    }

    fn create(&self, name: &str) -> Result<Box<P>, RegistryError> {
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
    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Factory<P>>> {
        self.factories.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Factory<P>>> {
        self.factories.write().unwrap_or_else(PoisonError::into_inner)
    }
}

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
    factories: Factories<dyn PrefetchPolicy>,
}

impl PolicyRegistry {
    /// An empty registry.
    pub fn new() -> PolicyRegistry {
        PolicyRegistry::default()
    }

    /// A registry with the built-in policies: `default` ([`DefaultPolicy`]),
    /// `retain` ([`RetainPolicy`]) and `balanced` ([`BalancedPolicy`]).
    pub fn with_builtin() -> PolicyRegistry {
        let builtin: Vec<(&str, PolicyFactory)> = vec![
            (DefaultPolicy::NAME, Arc::new(|| Box::new(DefaultPolicy::new()))),
            (RetainPolicy::NAME, Arc::new(|| Box::new(RetainPolicy::new()))),
            (BalancedPolicy::NAME, Arc::new(|| Box::new(BalancedPolicy::new()))),
        ];
        PolicyRegistry { factories: Factories::with(builtin) }
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
        self.factories.register(name.into(), factory)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.factories.names()
    }

    /// Whether a policy is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains(name)
    }

    /// A new instance of the policy registered under `name`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Unknown`], with the registered names, if none is
    /// registered under `name`.
    pub fn create(&self, name: &str) -> Result<Box<dyn PrefetchPolicy>, RegistryError> {
        self.factories.create(name)
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

/// A thread-safe map from grid policy name to a factory of that policy:
/// [`PolicyRegistry`] for [`GridPolicy`] (LMCache's newer policies, whose
/// `plan_load` works on grids). The same rules: registering a name twice is
/// an error, creating an unknown name is an error that lists the known
/// ones.
///
/// [`global_grid_registry`] is the process-wide one, with `default` and
/// `retain` registered.
///
/// ```
/// use prefetch_policy::{DefaultGridPolicy, GridPolicyRegistry, RegistryError};
///
/// let registry = GridPolicyRegistry::with_builtin();
/// assert_eq!(registry.names(), ["default", "retain"]);
/// registry.register("greedy", || Box::new(DefaultGridPolicy::new()))?;
/// assert_eq!(registry.create("greedy")?.name(), "default");
/// assert!(matches!(registry.create("balanced"), Err(RegistryError::Unknown { .. })));
/// # Ok::<(), RegistryError>(())
/// ```
#[derive(Default)]
pub struct GridPolicyRegistry {
    factories: Factories<dyn GridPolicy>,
}

impl GridPolicyRegistry {
    /// An empty registry.
    pub fn new() -> GridPolicyRegistry {
        GridPolicyRegistry::default()
    }

    /// A registry with the built-in grid policies: `default`
    /// ([`DefaultGridPolicy`]) and `retain` ([`RetainGridPolicy`]).
    pub fn with_builtin() -> GridPolicyRegistry {
        let builtin: Vec<(&str, GridPolicyFactory)> = vec![
            (DefaultGridPolicy::NAME, Arc::new(|| Box::new(DefaultGridPolicy::new()))),
            (RetainGridPolicy::NAME, Arc::new(|| Box::new(RetainGridPolicy::new()))),
        ];
        GridPolicyRegistry { factories: Factories::with(builtin) }
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
        factory: impl Fn() -> Box<dyn GridPolicy> + Send + Sync + 'static,
    ) -> Result<(), RegistryError> {
        self.register_factory(name, Arc::new(factory))
    }

    /// [`register`](GridPolicyRegistry::register) with a shared factory.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Duplicate`] if `name` is taken.
    pub fn register_factory(&self, name: impl Into<String>, factory: GridPolicyFactory) -> Result<(), RegistryError> {
        self.factories.register(name.into(), factory)
    }

    /// The registered names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.factories.names()
    }

    /// Whether a grid policy is registered under `name`.
    pub fn contains(&self, name: &str) -> bool {
        self.factories.contains(name)
    }

    /// A new instance of the grid policy registered under `name`.
    ///
    /// # Errors
    ///
    /// [`RegistryError::Unknown`], with the registered names, if none is
    /// registered under `name`.
    pub fn create(&self, name: &str) -> Result<Box<dyn GridPolicy>, RegistryError> {
        self.factories.create(name)
    }
}

impl fmt::Debug for GridPolicyRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GridPolicyRegistry").field("names", &self.names()).finish()
    }
}

/// The process-wide grid policy registry, created on first use with
/// `default` and `retain` registered.
pub fn global_grid_registry() -> &'static GridPolicyRegistry {
    static GLOBAL: OnceLock<GridPolicyRegistry> = OnceLock::new();
    GLOBAL.get_or_init(GridPolicyRegistry::with_builtin)
}

/// Registers a grid policy factory in the [`global_grid_registry`].
///
/// # Errors
///
/// [`RegistryError::Duplicate`] if `name` is taken.
pub fn register_grid_policy(
    name: impl Into<String>,
    factory: impl Fn() -> Box<dyn GridPolicy> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    global_grid_registry().register(name, factory)
}

/// The names registered in the [`global_grid_registry`], sorted.
pub fn registered_grid_policies() -> Vec<String> {
    global_grid_registry().names()
}

/// A new instance of the grid policy registered under `name` in the
/// [`global_grid_registry`].
///
/// # Errors
///
/// [`RegistryError::Unknown`] if none is registered under `name`.
pub fn create_grid_policy(name: &str) -> Result<Box<dyn GridPolicy>, RegistryError> {
    global_grid_registry().create(name)
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
    fn grid_registry_builtins_duplicates_and_unknowns() {
        let registry = GridPolicyRegistry::with_builtin();
        assert_eq!(registry.names(), ["default", "retain"]);
        assert!(registry.contains("retain") && !registry.contains("balanced"));
        assert_eq!(registry.create("retain").unwrap().select_l1_retentions(Keys::count(2)), [true, true]);
        assert_eq!(registry.create("default").unwrap().select_l1_retentions(Keys::count(1)), [false]);
        assert_eq!(
            registry.register("default", || Box::new(RetainGridPolicy::new())).unwrap_err(),
            RegistryError::Duplicate { name: "default".into() }
        );
        assert_eq!(registry.create("default").unwrap().name(), "default");
        assert_eq!(
            GridPolicyRegistry::new().create("default").unwrap_err(),
            RegistryError::Unknown { name: "default".into(), known: vec![] }
        );
        assert_eq!(format!("{registry:?}"), r#"GridPolicyRegistry { names: ["default", "retain"] }"#);
        assert!(registered_grid_policies().contains(&"default".to_owned()));
        register_grid_policy("grid-registry-unit-test", || Box::new(RetainGridPolicy::new())).unwrap();
        assert_eq!(create_grid_policy("grid-registry-unit-test").unwrap().name(), "retain");
        assert!(create_grid_policy("nope").is_err());
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
