//! Which environment variable names an order may set for its workload
//! (ARCHITECTURE.md §19). One rule, shared by the server (its 422 on `env.NAME`) and
//! the node agent (which refuses an assignment carrying such a name even if
//! it got past the server): a name is a shell variable name of at most 128
//! characters, and never one that makes a program run or load code it was
//! not asked to (the dynamic loader's and libc's hooks, shells' start-up
//! files, interpreters' start-up options).

/// Why a name cannot be set in a workload's environment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EnvNameError {
    /// Not `^[A-Za-z_][A-Za-z0-9_]{0,127}$`.
    #[error("must be a shell variable name: a letter or `_`, then letters, digits or `_`, at most 128 characters")]
    Malformed,
    /// A loader, libc, shell or interpreter hook (`LD_PRELOAD`, `BASH_ENV`, …).
    #[error("is a loader or runtime hook, which a workload's environment may not set")]
    LoaderOrRuntimeHook,
}

/// The longest name accepted.
pub const MAX_NAME_LEN: usize = 128;

/// Prefixes of hook families: every name starting with one is refused.
const HOOK_PREFIXES: &[&str] = &[
    // The dynamic loader (glibc, musl) and macOS's.
    "LD_",
    "DYLD_",
    // glibc's malloc tunables and checks.
    "MALLOC_",
    // bash's exported functions (`BASH_FUNC_f%%`; the `%` fails the name rule
    // already, the prefix keeps the family out whatever the spelling).
    "BASH_FUNC_",
];

/// Single names that load code, change how libc resolves or parses, or run
/// commands at a shell's or interpreter's start.
const HOOK_NAMES: &[&str] = &[
    // glibc
    "GCONV_PATH",
    "GETCONF_DIR",
    "GLIBC_TUNABLES",
    "HOSTALIASES",
    "LOCALDOMAIN",
    "LOCPATH",
    "NLSPATH",
    "RESOLV_HOST_CONF",
    "RES_OPTIONS",
    // shells
    "BASH_ENV",
    "BASHOPTS",
    "ENV",
    "IFS",
    "PROMPT_COMMAND",
    "PS4",
    "SHELLOPTS",
    // interpreters' start-up hooks
    "JAVA_TOOL_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "_JAVA_OPTIONS",
    "NODE_OPTIONS",
    "PERL5DB",
    "PERL5OPT",
    "PYTHONSTARTUP",
    "RUBYOPT",
];

/// Whether `name` may be set in a workload's environment, and if not, why.
pub fn check_name(name: &str) -> Result<(), EnvNameError> {
    let bytes = name.as_bytes();
    let well_formed = matches!(bytes.first(), Some(b) if b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= MAX_NAME_LEN
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_');
    if !well_formed {
        return Err(EnvNameError::Malformed);
    }
    if HOOK_PREFIXES.iter().any(|p| name.starts_with(p)) || HOOK_NAMES.contains(&name) {
        return Err(EnvNameError::LoaderOrRuntimeHook);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinary_names_are_accepted() {
        for name in [
            "A",
            "_",
            "_x1",
            "HF_TOKEN",
            "PYTHONPATH",
            "CUDA_VISIBLE_DEVICES",
            "ld_preload",
            "LDX",
            "MALLOC",
            &"N".repeat(128),
        ] {
            assert_eq!(check_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn names_that_are_not_shell_variables_are_malformed() {
        for name in [
            "",
            "1A",
            "A-B",
            "A B",
            "A=B",
            "É",
            "BASH_FUNC_f%%",
            "A\0",
            &"N".repeat(129),
        ] {
            assert_eq!(check_name(name), Err(EnvNameError::Malformed), "{name:?}");
        }
    }

    #[test]
    fn loader_and_runtime_hooks_are_refused() {
        for name in [
            "LD_PRELOAD",
            "LD_LIBRARY_PATH",
            "LD_AUDIT",
            "DYLD_INSERT_LIBRARIES",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "MALLOC_CHECK_",
            "NLSPATH",
            "HOSTALIASES",
            "LOCALDOMAIN",
            "RES_OPTIONS",
            "IFS",
            "BASH_ENV",
            "ENV",
            "PROMPT_COMMAND",
            "PYTHONSTARTUP",
            "PERL5OPT",
            "NODE_OPTIONS",
            "BASH_FUNC_x",
        ] {
            assert_eq!(
                check_name(name),
                Err(EnvNameError::LoaderOrRuntimeHook),
                "{name}"
            );
        }
    }
}
