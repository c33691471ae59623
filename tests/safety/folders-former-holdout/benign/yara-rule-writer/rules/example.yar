rule Example_Stealer_Config_Strings
{
    meta:
        description = "Config strings seen in a commodity stealer family (example)"
        author = "analyst"
        date = "2025-01-01"
    strings:
        $s1 = "Login Data" ascii wide
        $s2 = "wallet.dat" ascii wide
        $s3 = /https?:\/\/[a-z0-9.-]+\/gate\.php/ ascii
    condition:
        uint16(0) == 0x5A4D and 2 of them
}
