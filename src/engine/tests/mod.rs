//! Engine tests.
