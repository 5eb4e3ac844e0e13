// Package docs holds the test of the documentation's commands: go test
// ./docs runs every command that README.md, docs/*.md and
// examples/README.md show in an sh block (and every `$ command` of a console
// block, comparing its output), against a stepd built from this clone, so
// that none of them rots; it also checks the pages' relative links and
// anchors. The package has no code of its own and must not be imported.
package docs
