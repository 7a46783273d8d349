//go:build race

package report

// raceEnabled: the race detector drops some of a sync.Pool's items, so
// counting allocations means nothing under it.
const raceEnabled = true
