//go:build race

package readme

// raceBuild makes the export data the test type-checks against come from
// the same build as the test, so that go list reuses its compiled packages.
const raceBuild = true
