from trainwell.cli import entry

entry()
