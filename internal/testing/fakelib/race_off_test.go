//go:build !race

package fakelib_test

const raceEnabled = false
