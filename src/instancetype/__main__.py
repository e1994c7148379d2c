from instancetype.cli.main import main

main()
