//go:build race

package resilient_test

// raceDetector reports that the tests run under the race detector.
const raceDetector = true
