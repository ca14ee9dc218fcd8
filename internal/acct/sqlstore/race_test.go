//go:build race

package sqlstore

// raceEnabled reports that the tests run under the race detector.
const raceEnabled = true
