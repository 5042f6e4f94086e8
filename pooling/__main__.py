"""`python -m pooling` runs the command line."""

from pooling.cli import main

main()
