//go:build race

package cli

// raceEnabled lets the long simulator scenarios skip under -race, where
// they would take minutes; they run in every plain `go test`.
const raceEnabled = true
