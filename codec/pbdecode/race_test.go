//go:build race

package pbdecode

// hostileElems is the size of the hostile packed fields: smaller under the
// race detector, which makes every byte's work some fifty times slower.
const hostileElems = 200_000
