package conformance

// Exported for the external example test: it starts the server the
// example gates, as a project would start its own.
var StartServerUnderTest = startEtcd
