// Package docs holds vigil's documentation and the tests that keep it
// true: links and named paths exist, the CLI reference matches the
// commands, every check of the registry is documented with its excuses,
// and the history schema matches recorded runs.
package docs
