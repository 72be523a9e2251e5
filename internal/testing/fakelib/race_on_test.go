//go:build race

package fakelib_test

const raceEnabled = true
