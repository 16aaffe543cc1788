"""Operations: doctor, install, bench."""
