from instancetype.cli.entry import main

main()
