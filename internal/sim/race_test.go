//go:build race

package sim_test

// raceEnabled lets the long replays skip under -race (minutes there).
const raceEnabled = true
