"""Models: the manifest, local installs from removable media, offline bundles."""
