//! One integration-test binary: it links once, which matters on two cores.

mod support;

mod mock_selftest;
